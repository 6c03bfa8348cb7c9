"""Physical mode as docs/load.md shows it: the workers really spend their service time.

``dkg run --work cpu`` over a skewed topic with KEY and DYNAMIC_KEY at W=2, then
the page's query of ``gold.worker_busy``. Each worker's recorded tuples must be
the tuples gold counts on it, and its busy CPU time at least its tuples times
the service time (the work is CPU time of the worker's own task, measured
there); KEY's hot worker must have been busy far longer than its other worker,
DYNAMIC_KEY's two about as long as each other.
"""

from __future__ import annotations

import pytest

from tests.integration.documented.shown import Scenario, read_table, text_rows

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

MESSAGES, PROCESS_MS = 4000, 0.05
ENV = {"DKG_DATASET__MESSAGES": str(MESSAGES), "DKG_DATASET__RATE": "40",
       "DKG_RUN__QUALITY_GATES": "false"}  # fmt: skip

RUN = (".venv/bin/dkg run --dataset COUNTRY_SKEW_R80 --workers 2 --grouping KEY,DYNAMIC_KEY "
       "--work cpu --process-ms 0.05")  # fmt: skip
BUSY = ('.venv/bin/dkg sql "SELECT run_id, worker, sum(tuples) AS tuples, sum(busy_s) AS busy_s '
        'FROM gold.worker_busy GROUP BY run_id, worker"')  # fmt: skip
COMMANDS = (RUN, BUSY)


@pytest.fixture(scope="module")
def physical(spark, tmp_path_factory) -> Scenario:
    folder = tmp_path_factory.mktemp("physical")
    scenario = Scenario(folder, {**ENV, "DKG_KAFKA__EMBEDDED__RUN_DIR": str(folder / "kafka")})
    if scenario.run(RUN).code == 0:
        scenario.run(BUSY)
    return scenario


def test_each_worker_was_busy_for_its_tuples(physical):
    assert physical.last(RUN).code == 0, physical.last(RUN)
    done = physical.last(BUSY)
    assert done.code == 0, done
    lakehouse = physical.folder / "lakehouse"
    loads = read_table(lakehouse / "gold" / "worker_load").groupby(["run_id", "worker"])["tuples"].sum()
    labels = read_table(lakehouse / "gold" / "runs").set_index("run_id")["label"]
    busy: dict[str, dict[int, float]] = {}
    for row in text_rows(done.out):
        run_id, worker, tuples = row["run_id"], int(row["worker"]), int(row["tuples"])
        assert tuples == loads[(run_id, worker)], row
        assert float(row["busy_s"]) >= tuples * PROCESS_MS / 1000, row
        busy.setdefault(labels[run_id], {})[worker] = float(row["busy_s"])
    assert sorted(busy) == ["DYNAMIC_KEY", "KEY"] and all(len(w) == 2 for w in busy.values())
    # KEY puts the hot country (80 %) on one worker; DYNAMIC_KEY spreads it over both.
    key, balanced = sorted(busy["KEY"].values()), sorted(busy["DYNAMIC_KEY"].values())
    assert key[1] > 3 * key[0]
    assert balanced[1] < 1.5 * balanced[0]
