"""The layered settings: precedence, the local profile, secrets, errors, the reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, load_settings
from core.config.reference import config_reference
from core.kafka.client import KafkaClient
from silver.groupings.registry import GROUPING_NAMES, GroupingConfigError, make_grouping

REPO = Path(__file__).resolve().parents[3]


def _yaml(tmp_path: Path, text: str, name: str = "overlay.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_base_config_loads_and_every_grouping_accepts_its_parameters():
    settings = load_settings().settings
    assert settings.dataset.name == "ZIPF"
    for name in GROUPING_NAMES:
        make_grouping(name, 10, settings.grouping_params(name))


def test_layers_apply_in_order_yaml_then_environment_then_options(tmp_path):
    overlay = _yaml(tmp_path, "run:\n  workers: 33\n  process_ms: 2.5\n"
                              "groupings:\n  dynamic_key:\n    headroom: 0.5\n")  # fmt: skip
    env = {"DKG_RUN__WORKERS": "44", "DKG_RUN__SPEED": "3"}
    loaded = load_settings([overlay], cli={"run.speed": (7.0, "--speed")}, env=env)
    run = loaded.settings.run
    assert (run.workers, run.process_ms, run.speed) == (44, 2.5, 7.0)
    assert loaded.origin("run.workers") == "env DKG_RUN__WORKERS"
    assert loaded.origin("run.speed") == "--speed"
    assert loaded.origin("run.process_ms").endswith("overlay.yaml")
    assert loaded.origin("run.worker_window_ms").endswith("base.yaml")
    # A grouping named in any case merges with the base's parameters.
    params = loaded.settings.grouping_params("DYNAMIC_KEY")
    assert params["headroom"] == 0.5 and params["mode"] == "adaptive"


def test_local_profile_applies_only_when_no_kafka_is_named():
    local = load_settings(env={})
    assert local.profile == "local"
    assert local.settings.kafka.consumer["queued.min.messages"] == "1"
    # With that threshold, librdkafka's default 1-s fetch backoff stalled live reads.
    assert int(local.settings.kafka.consumer["fetch.queue.backoff.ms"]) <= 50
    assert local.settings.kafka.topics.replication_factor == 1

    own = load_settings(env={"DKG_KAFKA__BOOTSTRAP_SERVERS": "kafka:9092"})
    assert own.profile is None
    consumer = own.settings.kafka.consumer
    assert not {"queued.min.messages", "receive.message.max.bytes", "fetch.queue.backoff.ms"} & set(consumer)
    assert own.settings.kafka.topics.replication_factor is None  # the cluster's default
    # Generated data carries past event times: topics the project creates keep them anywhere.
    assert own.settings.kafka.topics.config == {"retention.ms": "-1", "retention.bytes": "-1"}
    client = KafkaClient.from_config(own.settings.kafka, "kafka:9092")
    assert "acks" not in client.producer_settings()


def test_secrets_come_from_the_environment_or_a_file_and_are_masked(tmp_path):
    secret_file = _yaml(tmp_path, "s3cr3t-from-file\n", "password.txt")
    env = {"DKG_KAFKA__BOOTSTRAP_SERVERS": "kafka:9093", "DKG_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
           "DKG_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512", "DKG_KAFKA__SASL_USERNAME": "svc",
           "DKG_KAFKA__SASL_PASSWORD_FILE": str(secret_file),
           "AWS_SECRET_ACCESS_KEY": "aws-s3cr3t", "AWS_REGION": "eu-west-1"}  # fmt: skip
    loaded = load_settings(env=env)
    client = KafkaClient.from_config(loaded.settings.kafka, "kafka:9093")
    settings = client.consumer_settings()
    assert settings["sasl.password"] == "s3cr3t-from-file"
    assert settings["security.protocol"] == "sasl_ssl"
    storage = loaded.settings.warehouse.storage_options
    assert storage["AWS_REGION"] == "eu-west-1"
    shown = "\n".join(" ".join(row) for row in loaded.rows())
    for text in (shown, repr(loaded.settings), repr(client)):
        assert "s3cr3t" not in text
    assert "**********" in shown and "eu-west-1" in shown


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kafka:\n  sasl_password: hunter2\n", "kafka.sasl_password is a secret"),
        ("warehouse:\n  storage_options:\n    AWS_SECRET_ACCESS_KEY: x\n", "is a secret"),
        ("kafka:\n  consumer:\n    sasl.password: x\n", "is a secret"),
    ],
)
def test_a_secret_in_yaml_is_refused(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_settings([_yaml(tmp_path, text)], env={})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run:\n  wokers: 3\n", r"unknown setting run.wokers \(did you mean run.workers\?\) .*overlay.yaml"),
        ("run:\n  workers: -1\n", r"run.workers: .*greater than or equal to 1 .*overlay.yaml"),
        ("run: [1, 2\n", "not valid YAML"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_config_is_a_clear_error_naming_its_origin(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_settings([_yaml(tmp_path, text)], env={})


def test_a_bad_environment_value_names_the_variable():
    with pytest.raises(ConfigError, match=r"run.workers: .*env DKG_RUN__WORKERS"):
        load_settings(env={"DKG_RUN__WORKERS": "many"})


def test_missing_config_file_and_unknown_profile(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings([tmp_path / "nope.yaml"], env={})
    with pytest.raises(ConfigError, match=r"no profile 'prod'.*local"):
        load_settings(profile="prod", env={})


def test_the_reference_in_docs_is_the_one_the_models_generate():
    committed = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    assert committed == config_reference(), "regenerate with: dkg config reference > docs/config.md"
    for setting in ("bootstrap_servers", "sasl_password", "storage_options", "master"):
        assert f"`{setting}`" in committed


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
