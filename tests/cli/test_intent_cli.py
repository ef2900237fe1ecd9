"""``clawmem intent …`` and ``clawmem job …`` in-process: exit codes, stdout, one-line errors."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from clawmem.program.main import main


@pytest.fixture
def run(home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    def call(*argv: str) -> tuple[int, str, str]:
        code = main(["--home", str(home), "--workspace", str(workspace), *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def create(run, *extra: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    code, out, err = run(
        "intent",
        "create",
        "--keywords",
        "杭州; hangzhou",
        "--channel",
        "telegram",
        "--sender",
        "u1",
        "--description",
        "提醒确认返程车票",
        "--json",
        *extra,
    )
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_create_and_list(run) -> None:  # type: ignore[no-untyped-def]
    intent = create(run, "--max-fires", "2", "--cooldown", "12", "--expires", "2026-12-31")
    assert intent["status"] == "armed" and intent["keywords"] == ["杭州", "hangzhou"]
    assert intent["maxFires"] == 2 and intent["cooldownSeconds"] == 43_200
    assert intent["expiresAt"] == "2027-01-01T00:00:00+00:00"
    assert (intent["channelScope"], intent["senderScope"]) == ("telegram", "u1")

    code, out, _ = run("intent", "list", "--json")
    assert code == 0 and [i["id"] for i in json.loads(out)["intents"]] == [intent["id"]]
    code, out, _ = run("intent", "list")
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID",
        "STATE",
        "FIRES",
        "KEYWORDS",
        "SCOPE",
        "COOLDOWN",
        "UNTIL",
        "EXPIRES",
        "DESCRIPTION",
    ]
    assert lines[1].startswith(intent["id"][:8] + "  armed  0/2")
    assert "杭州; hangzhou" in lines[1] and "telegram / u1" in lines[1] and lines[1].endswith("提醒确认返程车票")
    # Columns line up (CJK counts two cells): the description starts under its header.
    prefix = lines[1][: lines[1].index("提醒")]
    cells = sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in prefix)
    assert cells == lines[0].index("DESCRIPTION")
    assert run("intent", "list", "--status", "done")[1] == "No done standing intents.\n"


def test_create_errors(run, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run("intent", "create", "--keywords", "杭州", "--description", "x")
    assert code == 1 and out == ""
    assert err.startswith("clawmem: error: creating an intent needs a channel (--channel) and a sender (--sender)")
    assert err.count("\n") == 1 and "Traceback" not in err
    code, _, err = run(
        "intent", "create", "--keywords", "a;" + "k" * 121, "--description", "x", "--channel", "c", "--sender", "s"
    )
    assert code == 1 and "keyword 2 is longer than 120 characters" in err
    for fires in ("0", "99999999999999999999999", "10001"):
        code, _, err = run("intent", "create", "--keywords", "k", "--description", "x", "--max-fires", fires)
        assert code == 1 and err.count("\n") == 1
        assert "--max-fires: must be a whole number from 1 to 10,000" in err
    for expires in ("9999-12-31", "99999-12-31"):
        code, _, err = run("intent", "create", "--keywords", "k", "--description", "x", "--expires", expires)
        assert code == 1 and err.startswith("clawmem: error: --expires: ") and err.count("\n") == 1
    code, _, err = run(  # an offset that pushes the instant past year 9999: a user error, not OverflowError
        "intent",
        "create",
        "--keywords",
        "k",
        "--description",
        "x",
        "--channel",
        "c",
        "--sender",
        "s",
        "--expires",
        "9999-12-31T23:00-05:00",
    )
    assert code == 1 and err.startswith("clawmem: error: expiry '9999-12-31T23:00-05:00' is out of range")
    assert "latest allowed is 9999-12-30" in err and err.count("\n") == 1
    code, _, err = run("intent", "create", "--keywords", "k", "--description", "x", "--expires", "soon")
    assert code == 1 and err.startswith("clawmem: error: --expires: not an ISO date")


def test_match_dry_run_explains_every_intent_then_apply(run) -> None:  # type: ignore[no-untyped-def]
    other = create(run)
    run("intent", "cancel", other["id"])
    code, out, _ = run(
        "intent",
        "create",
        "--keywords",
        "release candidate",
        "--channel",
        "telegram",
        "--sender",
        "u2",
        "--description",
        "Ask who owns the RC",
        "--json",
    )
    rc = json.loads(out)
    hz = create(run)  # created last (same instant): the FIRE line still comes first

    code, out, err = run("intent", "match", "--channel", "telegram", "--sender", "u1", "我们下周去杭州玩，记得提醒我")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("FIRE  " + hz["id"][:8]) and 'keyword "杭州" → fired 1/3' in lines[1]
    rest = {line[6:14]: line for line in lines[2:4]}
    assert rest[other["id"][:8]].startswith("-  ") and rest[other["id"][:8]].endswith("cancelled")
    assert rest[rc["id"][:8]].endswith('sender "u1" ≠ scope "u2" (+1 more)')
    assert lines[4] == ""
    block = "<standing_intents>\nStanding intent (created 2026-11-05): 提醒确认返程车票\n</standing_intents>"
    assert block in out and out.rstrip().endswith("(dry run: nothing was changed; add --apply to fire)")
    assert json.loads(run("intent", "list", "--json")[1])["intents"][0]["fireCount"] == 0

    code, out, _ = run("intent", "match", "--channel", "telegram", "--sender", "u1", "--apply", "--json", "hangzhou")
    report = json.loads(out)
    assert report["applied"] and report["fired"] == [hz["id"]] and report["injected"] == block
    assert report["verdicts"][0]["outcome"] == "fires"
    by_id = {v["id"]: v for v in report["verdicts"]}
    assert (by_id[other["id"]]["outcome"], by_id[rc["id"]]["outcome"]) == ("state", "scope")
    assert by_id[rc["id"]]["keywords"][0]["missing"] == ["release", "candidate"]
    assert report["verdicts"][0]["after"]["status"] == "fired"

    code, out, _ = run("intent", "show", hz["id"][:8], "--json")
    shown = json.loads(out)
    assert shown["intent"]["fireCount"] == 1 and shown["fires"][0]["promptExcerpt"] == "hangzhou"


def test_cancel(run) -> None:  # type: ignore[no-untyped-def]
    intent = create(run)
    code, out, _ = run("intent", "cancel", intent["id"][:6])
    assert code == 0 and out.startswith(f"cancelled intent {intent['id'][:8]}")
    code, _, err = run("intent", "cancel", intent["id"])
    assert code == 1 and "is cancelled; only pending, armed or fired intents can be cancelled" in err
    code, _, err = run("intent", "cancel", "abc")
    assert code == 1 and "at least its first 6 characters" in err


def test_jobs_add_list_run_due_cancel(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(
        "job",
        "add",
        "--at",
        "2026-11-06T09:00",
        "--tz",
        "Asia/Shanghai",
        "--description",
        "confirm the return ticket",
        "--channel",
        "telegram",
        "--sender",
        "u1",
        "--json",
    )
    assert code == 0, err
    once = json.loads(out)
    assert once["nextRunAt"] == "2026-11-06T09:00:00+08:00" and once["schedule"].startswith("at 2026-11-06 09:00")
    code, out, err = run("job", "add", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--description", "standup")
    assert code == 1 and out == "" and err.count("\n") == 1  # nobody would receive it
    assert err.startswith("clawmem: error: a job needs a channel (--channel) and a sender (--sender)")
    code, out, _ = run(
        "job",
        "add",
        "--cron",
        "0 9 * * 1-5",
        "--tz",
        "Europe/Berlin",
        "--description",
        "standup",
        "--channel",
        "slack",
        "--sender",
        "u2",
    )
    assert code == 0 and "next run  2026-11-06 09:00 CET" in out

    code, out, _ = run("job", "run-due")
    assert out == "Nothing is due.\n"

    monkeypatch.setenv("CLAWMEM_NOW", "2026-11-12T08:30:00+00:00")
    code, out, _ = run("job", "run-due", "--dry-run", "--json")
    assert [d["skipped"] for d in json.loads(out)["due"]] == [0, 4]
    code, out, _ = run("job", "run-due")
    assert code == 0
    assert "RUN  " + once["id"][:8] + "  confirm the return ticket → telegram / u1" in out
    assert "caught up: 4 missed runs skipped; next: 2026-11-13 09:00 CET" in out

    code, out, _ = run("job", "list", "--json")
    jobs = {j["status"]: j for j in json.loads(out)["jobs"]}
    assert set(jobs) == {"done", "active"} and jobs["done"]["id"] == once["id"]
    standup = jobs["active"]
    assert standup["nextRunAt"] == "2026-11-13T09:00:00+01:00"
    assert standup["runs"][0] == {
        "jobId": standup["id"],
        "scheduledFor": "2026-11-12T09:00:00+01:00",
        "ranAt": "2026-11-12T09:30:00+01:00",
        "outcome": "caught_up",
        "skipped": 4,
    }
    code, out, _ = run("job", "list", "--history")
    assert "ran 2026-11-12 09:30 CET for 2026-11-12 09:00 CET, caught up: 4 missed runs skipped" in out

    code, out, _ = run("job", "cancel", standup["id"][:8])
    assert code == 0 and out.startswith(f"cancelled job {standup['id'][:8]}")
    code, _, err = run("job", "cancel", once["id"])
    assert code == 1 and "is done; only active jobs can be cancelled" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("job", "add", "--cron", "0 9 * * 1-8", "--description", "x"),
        ("job", "add", "--at", "2026-11-06T09:00", "--tz", "Mars/Olympus", "--description", "x"),
        ("job", "add", "--at", "2026-11-06", "--description", "x"),
        ("intent", "list", "--status", "sleeping"),
        ("job", "list", "--status", "sleeping"),
    ],
)
def test_bad_flag_values_are_one_line_user_errors(run, argv: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(*argv)
    assert code == 1 and out == "" and err.startswith("clawmem: error: --") and err.count("\n") == 1


def test_bad_usage_exits_2(run, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        run("job", "add", "--description", "x")  # neither --at nor --cron
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_past_run_time_is_a_user_error(run) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        "job", "add", "--at", "2026-11-01T09:00", "--tz", "UTC", "--description", "x", "--channel", "c", "--sender", "s"
    )
    assert code == 1 and err == "clawmem: error: the run time 2026-11-01 09:00 (UTC) is not in the future\n"
