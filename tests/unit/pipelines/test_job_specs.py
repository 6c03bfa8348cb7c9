"""Job specs: loading and checking, dependency order, failures, resume, specs by name,
tasks in the job's process and the job's result (tiny tasks, no Spark)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.job_specs import JobSpecError, load_job_spec, run_job
from pipelines.job_specs.entry_points import resolve_entry_point
from pipelines.job_specs.task_call import deadline
from pipelines.tasks import task_resources

REPO = Path(__file__).resolve().parents[3]

# Entry points the tests' specs may call.
SCRIPTS = {name: f"tests.unit.pipelines.job_tasks:{name}_main"
           for name in ("append", "fail", "sleep", "echo", "pid", "crash", "exit", "interrupt")}


def _resolve(package: str, entry_point: str) -> str | None:
    return SCRIPTS.get(entry_point) if package == "dkg_lakehouse" else None


def _task(key: str, entry: str = "append", depends: tuple[str, ...] = (), params=None) -> dict:
    task = {"task_key": key, "python_wheel_task": {
        "package_name": "dkg_lakehouse", "entry_point": entry,
        "parameters": params if params is not None else ["{{job.parameters.out}}", key]}}
    if depends:
        task["depends_on"] = [{"task_key": d} for d in depends]
    return task


def _write_spec(tmp_path: Path, tasks: list[dict], name: str = "demo") -> Path:
    spec = {"resources": {"jobs": {name: {
        "name": name,
        "parameters": [{"name": "out", "default": str(tmp_path / "out.txt")}, {"name": "n", "default": 3}],
        "tasks": tasks}}}}
    path = tmp_path / f"{name}.yml"
    path.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return path


DIAMOND = [_task("report", depends=("left", "right")), _task("right", depends=("start",)),
           _task("left", depends=("start",)), _task("start")]


def test_order_is_topological_and_stable(tmp_path):
    spec = load_job_spec(_write_spec(tmp_path, DIAMOND), resolve=_resolve)
    assert spec.order() == ["start", "right", "left", "report"]
    assert spec.task("report").depends_on == ("left", "right")


def test_references_are_substituted(tmp_path):
    tasks = [_task("a", params=["{{job.parameters.n}}", "{{ job.name }}", "{{task.name}}",
                                "x{{job.run_id}}"])]
    spec = load_job_spec(_write_spec(tmp_path, tasks), resolve=_resolve)
    parameters = spec.resolve_parameters({"n": "7"})
    assert spec.arguments(spec.task("a"), parameters, "r1") == ["7", "demo", "a", "xr1"]
    with pytest.raises(JobSpecError, match="no parameter 'nope'"):
        spec.resolve_parameters({"nope": "1"})


def test_named_parameters_become_options(tmp_path):
    task = _task("a")
    task["python_wheel_task"].pop("parameters")
    task["python_wheel_task"]["named_parameters"] = {"messages": 10, "topic": "t"}
    spec = load_job_spec(_write_spec(tmp_path, [task]), resolve=_resolve)
    assert spec.arguments(spec.task("a"), spec.parameters, "r") == ["--messages=10", "--topic=t"]


@pytest.mark.parametrize(("tasks", "message"), [
    ([_task("a", depends=("ghost",))], "depends on unknown task 'ghost'"),
    ([_task("a", depends=("b",)), _task("b", depends=("a",))], "cycle"),
    ([_task("a"), _task("a")], "used twice"),
    ([_task("a", entry="missing")], "entry point 'missing'"),
    ([_task("a", params=["{{job.parameters.typo}}"])], "unknown reference"),
    ([], "tasks"),
    ([{**_task("a"), "depend_on": []}], r"unknown key .*tasks\.0\.depend_on \(did you mean "
                                        r".*tasks\.0\.depends_on\?\)"),
])
def test_bad_specs_are_one_line_errors(tmp_path, tasks, message):
    with pytest.raises(JobSpecError, match=message) as caught:
        load_job_spec(_write_spec(tmp_path, tasks), resolve=_resolve)
    assert "\n" not in str(caught.value)


def test_yaml_error_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("resources:\n  jobs: [unclosed\n", encoding="utf-8")
    with pytest.raises(JobSpecError, match="not valid YAML"):
        load_job_spec(bad, resolve=_resolve)
    with pytest.raises(JobSpecError, match="cannot read"):
        load_job_spec(tmp_path / "none.yml", resolve=_resolve)


def test_run_in_order_and_record(tmp_path):
    spec = load_job_spec(_write_spec(tmp_path, DIAMOND), resolve=_resolve)
    seen = []
    run = run_job(spec, spec.parameters, tmp_path / "runs", report=lambda r: seen.append((r.key, r.status)))
    assert run.status == "succeeded"
    assert (tmp_path / "out.txt").read_text().split() == ["start", "right", "left", "report"]
    assert seen[:2] == [("start", "running"), ("start", "succeeded")]
    record = json.loads((tmp_path / "runs" / f"{run.run_id}.json").read_text())
    assert {k: t["status"] for k, t in record["tasks"].items()} == dict.fromkeys(
        ["start", "right", "left", "report"], "succeeded")
    assert all(t["seconds"] > 0 for t in record["tasks"].values())


def test_failure_stops_and_resume_skips_succeeded(tmp_path):
    spec = load_job_spec(_write_spec(tmp_path, DIAMOND), resolve=_resolve)
    (tmp_path / "fail-left").touch()
    first = run_job(spec, spec.parameters, tmp_path / "runs")
    assert first.status == "failed"
    assert {k: t.status for k, t in first.tasks.items()} == {
        "start": "succeeded", "right": "succeeded", "left": "failed", "report": "skipped"}
    assert first.tasks["left"].exit_code == 3
    assert "asked to fail" in Path(first.tasks["left"].log).read_text()
    (tmp_path / "fail-left").unlink()
    second = run_job(spec, spec.parameters, tmp_path / "runs", resume=True)
    assert second.status == "succeeded"
    assert second.run_id == first.run_id
    # start and right ran once: the resumed run only ran left and report.
    assert (tmp_path / "out.txt").read_text().split() == ["start", "right", "left", "report"]
    with pytest.raises(JobSpecError, match="other parameters"):
        run_job(spec, {**spec.parameters, "n": "9"}, tmp_path / "runs", resume=True)


def test_cli_run_validate_and_bad_spec(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("pipelines.job_specs.spec.resolve_entry_point", _resolve)
    tasks = [_task("first"), _task("boom", entry="fail", depends=("first",)),
             _task("last", depends=("boom",))]
    path = _write_spec(tmp_path, tasks)
    assert main(["job", "run", str(path), "--warehouse", str(tmp_path / "wh"), "--show-output"]) == 1
    out = capsys.readouterr().out
    assert "  | $ " in out.split("boom", 1)[0]  # the first task's output, shown as it ended
    assert "boom                 failed" in out and "exit 5" in out and "| boom" in out
    assert "last                 skipped" in out
    assert main(["job", "validate", str(path), "--param", f"out={tmp_path}/x"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "job demo: 3 tasks, valid"
    assert lines[2] == f"  boom (after first): fail {tmp_path}/x boom"
    cyclic = _write_spec(tmp_path, [_task("a", depends=("a",))], name="cyclic")
    assert main(["job", "run", str(cyclic)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dkg job: error:") and "cycle" in err and err.count("\n") == 1


def test_project_entry_points_resolve_from_pyproject():
    assert resolve_entry_point("dkg_lakehouse", "dkg-run") == "pipelines.tasks:run_main"
    assert resolve_entry_point("dkg-lakehouse", "dkg-produce") == "pipelines.tasks:produce_main"
    assert resolve_entry_point("other_package", "dkg-run") is None
    assert resolve_entry_point("dkg_lakehouse", "nope") is None


def test_a_task_past_its_timeout_fails(tmp_path):
    task = {**_task("slow", entry="sleep", params=["30"]), "timeout_seconds": 1}
    spec = load_job_spec(_write_spec(tmp_path, [task, _task("after", depends=("slow",))]),
                         resolve=_resolve)  # fmt: skip
    run = run_job(spec, spec.parameters, tmp_path / "runs")
    assert run.tasks["slow"].status == "failed"
    assert run.tasks["slow"].note == "timed out after 1 s"
    assert run.tasks["slow"].seconds < 20
    assert run.tasks["after"].status == "skipped"


def test_the_repository_specs_are_valid():
    conf = REPO / "conf" / "jobs"
    lakehouse = load_job_spec(conf / "lakehouse.yml")
    assert lakehouse.order() == ["produce", "run", "summary"]
    assert lakehouse.task("run").target == "pipelines.tasks:run_main"
    compare = load_job_spec(conf / "compare_groupings.yml")
    order = compare.order()
    assert order[0] == "produce" and order[-1] == "compare" and len(order) == 9
    arguments = compare.arguments(compare.task("run_smalops"), compare.parameters, "r")
    assert "--grouping=SMALOPS" in arguments and "--workers=10" in arguments


def test_resume_from_an_unreadable_record_is_a_one_line_error(tmp_path):
    spec = load_job_spec(_write_spec(tmp_path, [_task("a")]), resolve=_resolve)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "20260101-000000.json").write_text("{truncated", encoding="utf-8")
    with pytest.raises(JobSpecError, match="unreadable"):
        run_job(spec, spec.parameters, tmp_path / "runs", resume=True)
    assert not (tmp_path / "out.txt").exists()


def test_a_misspelt_tasks_key_is_named_not_the_missing_one(tmp_path):
    path = _write_spec(tmp_path, [_task("a")])
    path.write_text(path.read_text(encoding="utf-8").replace('"tasks":', '"taks":'), encoding="utf-8")
    with pytest.raises(JobSpecError, match=r"unknown key \S*\.taks \(did you mean \S*\.tasks\?\)"):
        load_job_spec(path, resolve=_resolve)


def test_tasks_run_in_the_jobs_process(tmp_path):
    pids = tmp_path / "pids"
    tasks = [_task("a", entry="pid", params=[str(pids)]),
             _task("b", entry="pid", params=[str(pids)], depends=("a",))]  # fmt: skip
    spec = load_job_spec(_write_spec(tmp_path, tasks), resolve=_resolve)
    assert run_job(spec, spec.parameters, tmp_path / "runs").status == "succeeded"
    assert pids.read_text().split() == [str(os.getpid())] * 2


@pytest.mark.parametrize(("entry", "params", "code", "logged"), [
    ("crash", ["x"], 1, "RuntimeError: bug ['x']"),  # a bug: its traceback, exit 1
    ("exit", ["4"], 4, ""),
    ("exit", ["0"], 0, ""),
])  # fmt: skip
def test_a_task_ends_as_its_process_would(tmp_path, entry, params, code, logged):
    spec = load_job_spec(_write_spec(tmp_path, [_task("t", entry=entry, params=params)]),
                         resolve=_resolve)  # fmt: skip
    result = run_job(spec, spec.parameters, tmp_path / "runs").tasks["t"]
    assert result.exit_code == code
    assert result.status == ("succeeded" if code == 0 else "failed")
    log = Path(result.log).read_text()
    assert log.startswith(f"$ {entry} ") and logged in log


def test_the_job_prints_its_last_tasks_result(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("pipelines.job_specs.spec.resolve_entry_point", _resolve)
    tasks = [_task("first", entry="echo", params=["early", "words"]),
             _task("last", entry="echo", params=["the", "table"], depends=("first",))]
    path = _write_spec(tmp_path, tasks)
    assert main(["job", "run", str(path), "--warehouse", str(tmp_path / "wh")]) == 0
    out = capsys.readouterr().out
    assert "last:\nthe table\njob demo run " in out  # stdout only: not the task's stderr
    assert "early words" not in out and "working" not in out
    record = next((tmp_path / "wh" / "_jobs" / "demo").glob("*/last.out"))
    assert record.read_text() == "the table\n"


@pytest.mark.parametrize("given", ["compare_groupings", "compare_groupings.yml",
                                   "conf/jobs/compare_groupings.yml"])  # fmt: skip
def test_a_projects_spec_is_found_by_name_from_any_folder(tmp_path, capsys, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compare_groupings").mkdir()  # a folder of that name is not a spec
    assert main(["job", "validate", given]) == 0
    assert capsys.readouterr().out.startswith("job compare_groupings: 9 tasks, valid")


def test_a_spec_in_the_folder_wins_over_the_projects(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write_spec(tmp_path, [_task("a")], name="lakehouse")
    monkeypatch.setattr("pipelines.job_specs.spec.resolve_entry_point", _resolve)
    assert main(["job", "validate", "lakehouse.yml"]) == 0
    assert capsys.readouterr().out.startswith("job lakehouse: 1 tasks, valid")


def test_an_unknown_spec_names_the_projects(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["job", "run", "compare_grouping"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dkg job: error: cannot read job spec compare_grouping: no such file")
    assert "compare_groupings, follow_topic, lakehouse" in err and err.count("\n") == 1


@pytest.mark.parametrize("name", ["compare_groupings", "follow_topic", "lakehouse"])
def test_every_task_of_the_repository_specs_is_accepted_by_its_command(name):
    spec = load_job_spec(REPO / "conf" / "jobs" / f"{name}.yml")
    for task in spec.tasks:
        resources = task_resources(task.target, spec.arguments(task, spec.parameters, "r"))
        assert resources is not None, task.key  # None: its command would refuse the arguments
        kafka, spark = {"dkg-produce": (True, False), "dkg-run": (True, True),
                        "dkg-sql": (False, True)}[task.entry_point]  # fmt: skip
        assert (resources.kafka, resources.spark) == (kafka, spark), task.key


def test_a_task_that_cannot_share_the_process_runs_in_its_own(tmp_path):
    # Off the main thread no signal can stop a task in time: one with a timeout
    # then runs in a process of its own, its output kept all the same.
    pids = tmp_path / "pids"
    tasks = [{**_task("own", entry="pid", params=[str(pids)]), "timeout_seconds": 60},
             _task("echo", entry="echo", params=["done"], depends=("own",))]  # fmt: skip
    spec = load_job_spec(_write_spec(tmp_path, tasks), resolve=_resolve)
    runs: list = []
    worker = threading.Thread(target=lambda: runs.append(run_job(spec, spec.parameters,
                                                                 tmp_path / "runs")))  # fmt: skip
    worker.start()
    worker.join(timeout=120)
    own, echo = runs[0].tasks["own"], runs[0].tasks["echo"]
    assert (own.status, own.note, echo.status, echo.note) == ("succeeded", "own process", "succeeded", "")
    assert int(pids.read_text()) != os.getpid()
    assert "in a process of its own: its timeout needs the main thread" in Path(own.log).read_text()
    assert Path(echo.output).read_text() == "done\n"


def test_an_interrupted_task_is_recorded_for_resume(tmp_path):
    spec = load_job_spec(_write_spec(tmp_path, [_task("stop", entry="interrupt", params=[])]),
                         resolve=_resolve)  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run_job(spec, spec.parameters, tmp_path / "runs")
    (record,) = (tmp_path / "runs").glob("*.json")
    task = json.loads(record.read_text())["tasks"]["stop"]
    assert (task["status"], task["note"]) == ("failed", "interrupted")


def test_a_task_deadline_keeps_an_alarm_set_before_it():
    # A test runner's own time limit, say: it must still go off after the task.
    handler = signal.signal(signal.SIGALRM, lambda *_: None)
    before, _ = signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        with deadline(5):
            pass
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 90 < left <= 100
    finally:
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, before)


def test_job_list_names_every_spec_and_exits_1_when_one_is_invalid(tmp_path, capsys):
    good = _write_spec(tmp_path, [_task("a"), _task("b", depends=("a",))], name="good")
    bad = tmp_path / "bad.yml"
    bad.write_text("resources:\n  jobs:\n    bad:\n      taks: []\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pipelines.job_specs.spec.resolve_entry_point", _resolve)
        assert main(["job", "list", str(tmp_path)]) == 1
        lines = capsys.readouterr().out.splitlines()
        assert lines == [f"{bad}: invalid: {bad}: unknown key resources.jobs.bad.taks "
                         "(did you mean resources.jobs.bad.tasks?)",
                         f"{good}: job good, tasks a -> b"]  # fmt: skip
        bad.unlink()
        assert main(["job", "list", str(tmp_path)]) == 0


def test_job_list_without_a_folder_lists_the_projects_specs(capsys):
    assert main(["job", "list"]) == 0
    names = [line.split(": job ")[1].split(",")[0] for line in capsys.readouterr().out.splitlines()]
    assert names == sorted(p.stem for p in (REPO / "conf" / "jobs").glob("*.yml"))
