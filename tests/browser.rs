//! A report of the committed results, written by this build and rendered by a real
//! browser (headless Chromium) in a window 1400 pixels wide: every chart present and
//! drawn, the summary first, no element wider than the page, every summary thumbnail
//! loaded and large enough to read, no word of a table broken across lines. In CI (`CI`
//! set) a missing browser fails the test; outside CI the test passes with a note. With
//! `MEMBENCH_SCREENSHOT=PATH` it also saves the top of the page there (the README's
//! `results/report/top.png`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Browsers that render headless, by the names their packages install.
const BROWSERS: &[&str] = &[
    "chromium",
    "chromium-headless-shell",
    "chromium-browser",
    "google-chrome",
];

/// The page's width in CSS pixels: a laptop's window.
const WINDOW: &str = "--window-size=1400,1000";

/// Run on load; writes what it finds into the title, which `--dump-dom` prints.
const CHECK: &str = r#"<script>
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  const first = document.querySelector("body > h2");
  if (!first || first.id !== "summary") problems.push("the first section is " + (first && first.id));
  const charts = [...document.querySelectorAll("figure > svg")];
  for (const svg of charts) {
    const box = svg.getBoundingClientRect();
    if (box.width < 300 || box.height < 150 || svg.querySelectorAll("text").length < 5)
      problems.push(svg.parentElement.id + " is empty (" + box.width + " x " + box.height + ")");
  }
  // What a scrolling box holds may be wider: the box is not.
  const scrolled = (element) => {
    for (let e = element.parentElement; e; e = e.parentElement)
      if (getComputedStyle(e).overflowX !== "visible") return true;
    return false;
  };
  for (const element of document.querySelectorAll("body *")) {
    const box = element.getBoundingClientRect();
    if (box.right > width + 1 && !scrolled(element) && problems.length < 20)
      problems.push((element.id || element.tagName) + " ends at " + Math.round(box.right) + " beyond " + width);
  }
  // A thumbnail at 0.8 of its size shows the charts' 12-pixel text at 9.6 pixels.
  for (const image of document.querySelectorAll(".summary img")) {
    if (!image.complete || image.naturalWidth === 0) problems.push(image.src + " did not load");
    else if (image.width < 0.8 * image.naturalWidth)
      problems.push(image.src + " shown " + image.width + " of " + image.naturalWidth + " wide");
  }
  // Every table open: no word of a cell on two lines ("trans pose"); a line may end
  // after a hyphen or a slash, as type does.
  for (const details of document.querySelectorAll("details")) details.open = true;
  const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = texts.nextNode(); node && problems.length < 20; node = texts.nextNode()) {
    if (!node.parentElement.closest("td, th")) continue;
    for (const word of node.data.matchAll(/[\p{L}\p{N}]+/gu)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.bottom)));
      if (lines.size > 1) { problems.push("\"" + word[0] + "\" broken across lines"); break; }
    }
  }
  document.title = "membench-check " + charts.length + " " + JSON.stringify(problems);
});
</script>
"#;

/// The first browser on `PATH`.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| BROWSERS.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// A report of the committed results (`results/*.csv`, the predictions their rows
/// recorded) written by this build into `dir`, or why it was not.
fn write_report(dir: &Path) -> Result<(), String> {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(["report", "--baseline", "H100", "--out"])
        .arg(dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(())
}

/// The browser's headless run of `args` on `page`: its stdout, or why it failed.
fn render(browser: &Path, page: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            WINDOW,
        ])
        .args(["--virtual-time-budget=10000"])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .map_err(|e| format!("{}: {e}", browser.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{}: {}",
            browser.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_report_of_the_committed_results_renders_in_a_browser() {
    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs a headless browser (one of {BROWSERS:?}); .ci/run installs chromium"
        );
        eprintln!("note: no headless browser ({BROWSERS:?}) on PATH: the report was not rendered");
        return;
    };
    // The page with the check appended, beside the charts its thumbnails load.
    let copy = std::env::temp_dir().join(format!("membench-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    write_report(&copy).unwrap();
    let charts = std::fs::read_dir(&copy)
        .unwrap()
        .filter(|entry| {
            let path = entry.as_ref().unwrap().path();
            path.extension().is_some_and(|e| e == "svg")
        })
        .count();
    let html = std::fs::read_to_string(copy.join("index.html")).unwrap();
    let page = copy.join("checked.html");
    std::fs::write(&page, html.replace("</body>", &format!("{CHECK}</body>"))).unwrap();

    let dom = render(&browser, &page, &["--dump-dom"]).unwrap();
    let start = dom.find("membench-check ").expect("the check did not run") + 15;
    let answer = &dom[start..start + dom[start..].find("</title>").unwrap()];
    let (drawn, problems) = answer.split_once(' ').unwrap();
    // Every chart file is drawn in the page once (the tax charts and each family's).
    assert_eq!(drawn.parse::<usize>().unwrap(), charts, "{answer}");
    assert_eq!(problems, "[]", "{answer}");

    if let Some(screenshot) = std::env::var_os("MEMBENCH_SCREENSHOT") {
        let screenshot = std::path::absolute(screenshot).unwrap();
        let target = format!("--screenshot={}", screenshot.display());
        render(&browser, &copy.join("index.html"), &[&target]).unwrap();
        assert!(screenshot.is_file());
    }
    std::fs::remove_dir_all(copy).unwrap();
}
