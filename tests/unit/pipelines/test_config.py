from __future__ import annotations

import pytest

from core.config import ConfigError, load_config
from silver.groupings.registry import GROUPING_NAMES, GroupingConfigError, make_grouping


def test_base_config_loads_and_every_grouping_accepts_its_parameters():
    config = load_config()
    assert config.simulate.dataset == "ZIPF"
    for name in GROUPING_NAMES:
        make_grouping(name, 10, config.grouping_params(name))


def test_overlay_overrides_base(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("simulate:\n  workers: 33\ngroupings:\n  DYNAMIC_KEY:\n    headroom: 0.5\n")
    from core.config import default_conf_dir

    config = load_config(default_conf_dir() / "base.yaml", overlay)
    assert config.simulate.workers == 33
    assert config.simulate.messages == load_config().simulate.messages
    assert config.grouping_params("DYNAMIC_KEY")["headroom"] == 0.5
    assert config.grouping_params("DYNAMIC_KEY")["mode"] == "adaptive"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("simulate:\n  wokers: 3\n", "wokers"),
        ("simulate:\n  workers: -1\n", "workers"),
        ("simulate: [1, 2\n", "not valid YAML"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("NOPE", {}, "unknown grouping"),
        ("DYNAMIC_KEY", {"mode": "fast"}, "mode"),
        ("DYNAMIC_KEY", {"headrom": 1}, "headrom"),
        ("W_CHOICES", {"heavy_threshold_factor": -1}, "heavy_threshold_factor"),
    ],
)
def test_bad_grouping_settings_are_clear_errors(name, params, message):
    with pytest.raises(GroupingConfigError, match=message):
        make_grouping(name, 4, params)
