"""A committee's judge whose answer holds no readable findings, even when asked again, is
told as the disputatio protocol tells it: respondeo.md says UNCLEAR and why above the answer,
and the closing line says the findings could not be read (the ruling had a STATUS line)."""

from __future__ import annotations

from support import invoke, one_path, sim, write_config


def test_an_unreadable_ruling_says_why_in_respondeo_md_and_on_stderr(home):
    judge = {**sim("judge", DISPUTATIO_SIM_STATUS="garbled"), "model": "judge"}
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")], judge=judge)
    ran = invoke("--config", str(path), "--protocol", "committee", "Tabs or spaces?", cwd=home)
    assert ran.returncode == 0, ran.stderr
    respondeo = one_path(ran.stdout)
    assert respondeo.name == "respondeo.md"
    text = respondeo.read_text()
    assert text.startswith("# Respondeo\n\n**Verdict: UNCLEAR** — no readable findings")
    assert "no fenced ```json block was found in the answer" in text
    assert "## The judge's answer" in text and "> STATUS: RESOLVED" in text
    said = ran.stderr.strip().splitlines()[-1]
    assert said.startswith("the judge's answer could not be read as findings (asked twice)")
    assert "STATUS line" not in ran.stderr
