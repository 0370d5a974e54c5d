//! The report's conversation views (`--conversations`, `#c-UID`) and `turnbench show`,
//! through the binary: every failed conversation of the built-in run is one click away,
//! and hostile transcripts render as text.

use crate::common::*;

/// A transcript whose prompt and answer hold markup, a `javascript:` URL and a terminal
/// escape, in a scenario with built-in checks (so it is checked, and fails).
const HOSTILE: &str = r#"{"id":"evil-1","provider":"acme","model":"m1","scenario":"biz-policy-faq","repeat":1,"messages":[{"role":"user","content":"<script>alert('prompt')</script>"},{"role":"assistant","content":"<img src=x onerror=alert(1)></details><a href=\"javascript:alert(2)\">click</a>\u001b[31mred","timing":{"ttft_ms":12,"e2e_ms":40}}]}
{"id":"good-1","provider":"acme","model":"m1","scenario":"biz-policy-faq","repeat":2,"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"fine","timing":{"ttft_ms":10,"e2e_ms":30}}]}
"#;

fn hostile_project() -> Project {
    let p = Project::new(&[]);
    p.write("evil.jsonl", HOSTILE);
    p.run_ok(&["import", "evil.jsonl"]);
    p.run_ok(&["check"]);
    p
}

fn html(p: &Project, extra: &[&str]) -> String {
    let mut args = vec!["report", "--format", "html", "--out", "r.html"];
    args.extend_from_slice(extra);
    p.run_ok(&args);
    std::fs::read_to_string(p.path("r.html")).unwrap()
}

/// The `<article>` of one conversation view.
fn view<'a>(html: &'a str, uid: &str) -> &'a str {
    let start = html
        .find(&format!("<article class=\"conv\" id=\"c-{uid}\">"))
        .unwrap_or_else(|| panic!("no view of {uid}"));
    let len = html[start..].find("</article>").unwrap();
    &html[start..start + len]
}

#[test]
fn hostile_transcripts_render_as_text_in_the_view() {
    let p = hostile_project();
    let page = html(&p, &[]);
    let v = view(&page, "evil-1");
    assert!(
        v.contains("&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt;"),
        "{v}"
    );
    assert!(
        v.contains("&lt;img src=x onerror=alert(1)&gt;&lt;/details&gt;"),
        "{v}"
    );
    assert!(
        v.contains("href=\\&quot;javascript:alert(2)\\&quot;")
            || v.contains("href=&quot;javascript:alert(2)&quot;"),
        "{v}"
    );
    // No tag or attribute from the transcript exists anywhere in the page.
    for injected in ["<script", "<img", "href=\"javascript:", "\u{1b}"] {
        assert!(!page.contains(injected), "{injected} in the page");
    }
    // The page's only </details> close the page's own <details>.
    assert_eq!(
        page.matches("<details").count(),
        page.matches("</details>").count()
    );
    // A failed check is listed with its explanation and linked from the index.
    assert!(v.contains("<span class=\"oc bad\">FAIL</span>"), "{v}");
    assert!(page.contains("href=\"#c-evil-1-checks\""));
    assert!(page.contains("href=\"#c-evil-1\""));
    // The passing conversation is the cell's example.
    assert!(page.contains("id=\"c-good-1\""));
}

#[test]
fn show_prints_the_view_inert_and_as_json() {
    let p = hostile_project();
    let (text, _) = p.run_ok(&["show", "evil-1"]);
    assert!(text.contains("uid evil-1"), "{text}");
    assert!(text.contains("<script>alert('prompt')</script>"), "{text}");
    assert!(text.contains("\\u{1b}[31mred"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal"
    );
    assert!(text.contains("FAIL"), "{text}");
    let (json, _) = p.run_ok(&["show", "evil-1", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["uid"], "evil-1");
    assert_eq!(v["turns"][0]["e2e_ms"], 40.0);
    assert!(v["checks"].as_array().is_some_and(|c| !c.is_empty()));
    let out = p.cmd(&["show", "nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no conversation \"nope\""));
}

#[test]
fn none_shows_no_views_and_the_cap_names_what_it_left_out() {
    let p = hostile_project();
    let page = html(&p, &["--conversations", "none"]);
    assert!(!page.contains("class=\"conv\""));
    assert!(!page.contains("id=\"conversations\""));
    let page = html(&p, &["--conversations", "all", "--conversations-cap", "1"]);
    assert_eq!(page.matches("<article class=\"conv\"").count(), 1);
    assert!(
        page.contains(
            "1 of 2 conversations selected by --conversations all have no view here (the cap is 1)"
        ),
        "no cap note"
    );
    assert!(page.contains("`turnbench show CONVERSATION`"));
}

#[test]
fn every_failure_of_the_builtin_run_has_a_reachable_view_with_its_explanation() {
    let p = Project::new(&[]);
    // No scenarios folder: the built-in bench.
    std::fs::remove_dir(p.path("scenarios")).unwrap();
    p.run_ok(&["--quiet", "run"]);
    let page = std::fs::read_to_string(p.path("report.html")).unwrap();
    let conn = p.conn();
    let failed = rows(
        &conn,
        "SELECT uid FROM conversation_facts WHERE counts AND (outcome <> 'completed'
           OR conversation_id IN (SELECT conversation_id FROM current_check_results WHERE passed = 0))",
        [],
        |r| r.get::<_, String>(0),
    );
    assert!(
        failed.len() > 5,
        "the built-in run has failures: {}",
        failed.len()
    );
    // The matrix: one square per scenario × provider (15 × 4), each able to take the
    // colour of any of the three figures the reader picks (CSS only, no script).
    let matrix = page
        .split("<section id=\"matrix\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("a matrix section");
    for id in ["mx-by-checks", "mx-by-done", "mx-by-judge"] {
        assert!(matrix.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let squares = matrix.matches("<td class=\"sq\"").count();
    assert_eq!(squares, 60);
    assert_eq!(matrix.matches("--b1:").count(), squares);
    assert_eq!(
        matrix.matches(";--b2:hsl(").count(),
        squares,
        "every square has a completion"
    );
    assert!(
        matrix.contains(";--b3:hsl("),
        "judged squares are coloured by the judge too"
    );
    assert!(!page.contains("<script"));
    // The failure classes' table links to the conversations behind each class, and the
    // judge table to those in each criterion's lowest band.
    let reliability = page
        .split("<h2>RELIABILITY")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("a reliability table");
    let not_completed = rows(
        &conn,
        "SELECT uid FROM conversation_facts WHERE counts AND outcome NOT IN ('completed', 'interrupted')",
        [],
        |r| r.get::<_, String>(0),
    );
    assert!(!not_completed.is_empty());
    assert!(reliability.contains("Conversations behind the failures"));
    for uid in &not_completed {
        assert!(
            reliability.contains(&format!("href=\"#c-{uid}\"")),
            "{uid} not linked from its failure class"
        );
    }
    let judge = page
        .split("<h2>JUDGE · ")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("a judge table");
    assert!(
        judge.contains("Conversations behind the lowest scores"),
        "{judge}"
    );
    let lowest = rows(
        &conn,
        "SELECT DISTINCT c.uid FROM current_judgments j JOIN conversations c ON c.id = j.conversation_id,
           json_each(j.scores) s WHERE j.status = 'ok' AND s.value <= 1",
        [],
        |r| r.get::<_, String>(0),
    );
    assert!(!lowest.is_empty());
    for uid in &lowest {
        assert!(judge.contains(&format!("href=\"#c-{uid}\"")), "{uid}");
    }
    // Over the cap: the lists link only to views in the file and say how many have none.
    p.run_ok(&[
        "report",
        "--format",
        "html",
        "--out",
        "capped.html",
        "--conversations-cap",
        "2",
    ]);
    let capped = std::fs::read_to_string(p.path("capped.html")).unwrap();
    for href in capped.split("href=\"#c-").skip(1) {
        let uid = href.split('"').next().unwrap();
        let uid = uid.strip_suffix("-checks").unwrap_or(uid);
        assert!(
            capped.contains(&format!("id=\"c-{uid}\"")),
            "a link to {uid}, not in the file"
        );
    }
    assert!(capped.contains("without a view here: --conversations failed, cap 2"));
    for uid in &failed {
        let v = view(&page, uid);
        assert!(
            page.contains(&format!("href=\"#c-{uid}\"")),
            "{uid} not linked"
        );
        let explanations = rows(
            &conn,
            "SELECT r.check_id, r.detail FROM current_check_results r JOIN conversations c
             ON c.id = r.conversation_id WHERE c.uid = ?1 AND r.passed = 0",
            [uid],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
        );
        for (check, detail) in explanations {
            assert!(page.contains(&format!("href=\"#c-{uid}-checks\">{check}</a>")));
            if let Some(d) = detail {
                let first = d.lines().next().unwrap_or_default();
                let escaped = first
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('"', "&quot;")
                    .replace('\'', "&#39;");
                assert!(v.contains(&escaped), "{uid} {check}: {first}");
            }
        }
    }
}

/// A baseline for `evil-1` (same run, scenario and repeat, another provider).
const BASELINE: &str = r#"{"id":"base-1","provider":"base","model":"m1","scenario":"biz-policy-faq","repeat":1,"messages":[{"role":"user","content":"<script>alert('prompt')</script>"},{"role":"assistant","content":"a plain answer","timing":{"ttft_ms":12,"e2e_ms":40}}]}
"#;

#[test]
fn pairwise_verdicts_show_in_both_views_in_both_positions_inert() {
    let p = Project::new(&[]);
    p.write("evil.jsonl", &format!("{HOSTILE}{BASELINE}"));
    p.run_ok(&["import", "evil.jsonl"]);
    p.run_ok(&["check"]);
    let repo = env!("CARGO_MANIFEST_DIR");
    p.run_ok(&[
        "judge",
        "--judge",
        &format!("{repo}/judges/mock.toml"),
        "--rubric",
        &format!("{repo}/rubrics/multiturn-quality.toml"),
        "--pairwise",
        "--baseline",
        "base",
    ]);
    // A hostile rationale, and an answer that changes with the position: the candidate
    // preferred when the baseline was shown second (the mock said tie both times).
    p.conn()
        .execute_batch(
            "UPDATE pairwise_judgments SET rationale = '<script>alert(9)</script></details>'
               WHERE baseline_position = 'A';
             UPDATE pairwise_judgments SET winner = 'A', preferred = 'candidate'
               WHERE baseline_position = 'B';",
        )
        .unwrap();
    let page = html(&p, &["--conversations", "all"]);
    assert!(!page.contains("<script"));
    let candidate = view(&page, "evil-1");
    assert!(candidate.contains("Pairwise verdicts"), "{candidate}");
    // The opponent has a view in this file: linked.
    assert!(
        candidate.contains("base / m1 <a href=\"#c-base-1\">base-1</a>"),
        "{candidate}"
    );
    assert!(candidate.contains("tie (inconsistent"), "{candidate}");
    // evil-1 is the candidate: shown second when the baseline was first, then first.
    assert!(candidate.contains("second (B): tie (tie)"), "{candidate}");
    assert!(candidate.contains("first (A): A (this)"), "{candidate}");
    assert!(candidate.contains("&lt;script&gt;alert(9)&lt;/script&gt;&lt;/details&gt;"));
    let baseline = view(&page, "base-1");
    assert!(
        baseline.contains("<a href=\"#c-evil-1\">evil-1</a>"),
        "{baseline}"
    );
    assert!(baseline.contains("first (A): tie (tie)"), "{baseline}");
    assert!(baseline.contains("second (B): A (opponent)"), "{baseline}");
    // Without the opponent's view in the file, no link to it.
    let page = html(&p, &["--conversations", "all", "--conversations-cap", "1"]);
    let candidate = view(&page, "evil-1");
    assert!(candidate.contains("Pairwise verdicts"));
    assert!(!candidate.contains("href=\"#c-base-1\""), "{candidate}");

    let (text, _) = p.run_ok(&["show", "base-1"]);
    assert!(text.contains("pairwise verdicts"), "{text}");
    assert!(
        text.contains("as baseline against acme / m1 evil-1"),
        "{text}"
    );
    assert!(text.contains("this shown A: winner tie (tie)"), "{text}");
    assert!(text.contains("this shown B: winner A (opponent)"), "{text}");
    assert!(text.contains("<script>alert(9)</script>"), "{text}");
    let (json, _) = p.run_ok(&["show", "evil-1", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let pair = &v["pairwise"][0];
    assert_eq!(pair["role"], "candidate");
    assert_eq!(pair["opponent_uid"], "base-1");
    assert_eq!(pair["judge"], "mock");
    assert_eq!(pair["consistent"], false);
    assert_eq!(pair["verdict"], "tie");
    let asks = pair["asks"].as_array().unwrap();
    assert_eq!(asks.len(), 2);
    assert_eq!(asks[0]["position"], "A");
    assert_eq!(asks[0]["winner"], "A");
    assert_eq!(asks[0]["preferred"], "this");
    assert_eq!(asks[1]["position"], "B");
    assert_eq!(asks[1]["rationale"], "<script>alert(9)</script></details>");
}

#[test]
fn the_matrix_is_a_table_in_csv_json_and_markdown() {
    let p = Project::new(&[]);
    p.write(
        "evil.jsonl",
        &format!("{HOSTILE}{}", BASELINE.replace("\"base\"", "\"=cmd|calc\"")),
    );
    p.run_ok(&["import", "evil.jsonl"]);
    p.run_ok(&["check"]);
    let (json, _) = p.run_ok(&["report", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let matrix = v["matrix"].as_array().unwrap();
    assert_eq!(matrix.len(), 2, "{matrix:?}");
    let (csv, _) = p.run_ok(&["report", "--format", "csv", "--matrix"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "model,provider,scenario,simulated,attempted,completed,checks_scored,checks_passed,check_pass_rate,judge,judge_n,judge_mean"
    );
    assert_eq!(lines.len(), 1 + matrix.len(), "{csv}");
    let acme = matrix.iter().find(|m| m["provider"] == "acme").unwrap();
    let row = lines.iter().find(|l| l.starts_with("m1,acme,")).unwrap();
    assert!(
        row.starts_with(&format!(
            "m1,acme,biz-policy-faq,false,2,2,{},{},",
            acme["checks_scored"], acme["checks_passed"]
        )),
        "{row}"
    );
    // A provider named like a formula is neutralised.
    assert!(csv.contains("m1,'=cmd|calc,biz-policy-faq"), "{csv}");
    // Without --matrix: the cells; --matrix with --trend is refused.
    let (cells, _) = p.run_ok(&["report", "--format", "csv"]);
    assert!(cells.starts_with("provider,model,"));
    assert!(
        !p.cmd(&["report", "--format", "csv", "--matrix", "--trend"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let (md, _) = p.run_ok(&["report", "--format", "md"]);
    assert!(md.contains("## Scenarios × cells"), "{md}");
    assert!(md.contains("| m1 | biz-policy-faq | acme | 2/2 |"), "{md}");
}

/// A rubric on a 0–10 scale: its lowest band is 0–2 (the bottom fifth), not "≤ 1".
const WIDE_RUBRIC: &str = r#"id = "wide"
version = 1
title = "A rubric on a 0 to 10 scale"
scale = { min = 0, max = 10 }

[[criterion]]
id = "c"
question = "Is it good?"
anchors = { 0 = "bad", 10 = "good" }

[completed]
question = "Done?"
"#;

#[test]
fn the_lowest_band_follows_the_rubric_scale() {
    let p = Project::new(&[]);
    // Two completed conversations of a scenario without checks: neither fails a check.
    let plain = |id: &str, repeat: u32| {
        format!(
            r#"{{"id":"{id}","provider":"acme","model":"m1","scenario":"free-talk","repeat":{repeat},"messages":[{{"role":"user","content":"hello"}},{{"role":"assistant","content":"fine","timing":{{"ttft_ms":10,"e2e_ms":30}}}}]}}"#
        )
    };
    p.write(
        "evil.jsonl",
        &format!(
            "{}\n{}\n{}\n",
            HOSTILE.lines().next().unwrap(),
            plain("good-1", 1),
            plain("good-2", 2)
        ),
    );
    p.run_ok(&["import", "evil.jsonl"]);
    p.run_ok(&["check"]);
    p.write("wide.toml", WIDE_RUBRIC);
    let repo = env!("CARGO_MANIFEST_DIR");
    p.run_ok(&[
        "judge",
        "--judge",
        &format!("{repo}/judges/mock.toml"),
        "--rubric",
        "wide.toml",
        "--sample",
        "all",
    ]);
    // good-1 scores 2 (in the band 0–2), good-2 scores 3 (above it).
    p.conn()
        .execute_batch(
            "UPDATE judgments SET scores = '{\"c\":2}'
               WHERE conversation_id = (SELECT id FROM conversations WHERE uid = 'good-1');
             UPDATE judgments SET scores = '{\"c\":3}'
               WHERE conversation_id = (SELECT id FROM conversations WHERE uid = 'good-2');",
        )
        .unwrap();
    let page = html(&p, &[]);
    let judge = page
        .split("<h2>JUDGE · wide@1")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("a judge table");
    assert!(
        judge.contains("acme / m1 · c ≤ 2: 1 — <a href=\"#c-good-1\""),
        "{judge}"
    );
    assert!(!judge.contains("#c-good-2"), "{judge}");
    // Selected for its low score: good-1 has a view; good-2 is only the cell's passing
    // example (the first conversation of the cell that did not fail).
    assert!(page.contains("id=\"c-good-1\""));
    assert!(page.contains("id=\"c-good-2\""));
    let note = page.split("<section id=\"conversations\">").nth(1).unwrap();
    assert!(
        note.contains(": 2 selected."),
        "evil-1 and good-1 selected: {}",
        &note[..600]
    );
    // The index says why good-1 is among the views: its low score, linked to its
    // judgments; good-2 (the passing example) has none.
    let index_row = |uid: &str| -> String {
        let index = note
            .split("<caption>Conversations shown in full</caption>")
            .nth(1)
            .and_then(|s| s.split("</table>").next())
            .expect("the index");
        index
            .split("<tr>")
            .find(|r| r.contains(&format!("href=\"#c-{uid}\">{uid}<")))
            .unwrap_or_else(|| panic!("no index row for {uid}: {index}"))
            .to_string()
    };
    assert!(
        index_row("good-1").contains("<a href=\"#c-good-1-judge\">c ≤ 2</a>"),
        "{}",
        index_row("good-1")
    );
    assert!(
        !index_row("good-2").contains("≤"),
        "{}",
        index_row("good-2")
    );
}
