//! The committed report, rendered by a real browser (headless Chromium): every chart
//! present and drawn, the summary first, no element wider than the page, every
//! summary thumbnail loaded. In CI (`CI` set) a missing browser fails the test; outside
//! CI the test passes with a note. With `MEMBENCH_SCREENSHOT=PATH` it also saves the
//! top of the page there (the README's `results/report/top.png`).

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
const WINDOW: &str = "--window-size=1280,1000";

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
  for (const image of document.querySelectorAll(".summary img"))
    if (!image.complete || image.naturalWidth === 0) problems.push(image.src + " did not load");
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

fn report_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/report")
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
fn the_committed_report_renders_in_a_browser() {
    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs a headless browser (one of {BROWSERS:?}); .ci/run installs chromium"
        );
        eprintln!("note: no headless browser ({BROWSERS:?}) on PATH: the report was not rendered");
        return;
    };
    // A copy with the check appended, beside the charts its thumbnails load.
    let copy = std::env::temp_dir().join(format!("membench-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    let mut charts = 0;
    for entry in std::fs::read_dir(report_dir()).unwrap() {
        let path = entry.unwrap().path();
        charts += usize::from(path.extension().is_some_and(|e| e == "svg"));
        std::fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
    }
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
