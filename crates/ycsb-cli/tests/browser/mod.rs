//! Headless Chromium for the tests of pages the `ycsb` binary makes
//! (`ycsb report`'s, the live view).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium, if installed.
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs Chromium headless on `args` (a fresh profile inside `dir`),
/// killed after a minute; returns (stdout, stderr).
pub fn run_chromium(chromium: &Path, dir: &Path, args: &[String]) -> (String, String) {
    let profile = tempfile::tempdir_in(dir).unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = r.read_to_string(&mut text);
            text
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (out.join().unwrap(), err.join().unwrap())
}

/// A script that checks the page's layout once drawn and writes what it
/// found into `<pre id="layout-check">`: per chart (each `figure svg`)
/// how many shapes it draws, every text that leaves its chart (a clipped
/// label) or overlaps another text of the same chart (slanted bar labels,
/// whose boxes overlap while their glyphs do not, are only checked for
/// clipping), and whether the page is wider than the window.
pub const LAYOUT_CHECKER: &str = r#"<script>
(function () {
  var lines = [];
  var problems = [];
  var inside = function (a, b) {
    return a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  };
  var overlap = function (a, b) {
    var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    return w > 1 && h > 1;
  };
  document.querySelectorAll('figure > svg').forEach(function (svg, i) {
    var box = svg.getBoundingClientRect();
    var shapes = 0;
    svg.querySelectorAll('path, circle, rect > title').forEach(function (shape) {
      var target = shape.tagName === 'title' ? shape.parentNode : shape;
      var b = target.getBBox();
      if (b.width > 0 || b.height > 0) { shapes += 1; }
    });
    var title = svg.querySelector('text') ? svg.querySelector('text').textContent : '?';
    var texts = [];
    svg.querySelectorAll('text').forEach(function (t) {
      if (!t.textContent) { return; }
      var r = t.getBoundingClientRect();
      if (!inside(r, box)) { problems.push('clipped in "' + title + '": "' + t.textContent + '"'); }
      if (!(t.getAttribute('transform') || '').includes('rotate(40)')) { texts.push([t, r]); }
    });
    for (var a = 0; a < texts.length; a++) {
      for (var b = 0; b < a; b++) {
        if (overlap(texts[a][1], texts[b][1])) {
          problems.push('overlap in "' + title + '": "' + texts[a][0].textContent + '" and "' + texts[b][0].textContent + '"');
        }
      }
    }
    lines.push('chart ' + i + ' shapes=' + shapes + ' size=' + Math.round(box.width) + 'x' + Math.round(box.height) + ' title=' + title);
  });
  if (document.documentElement.scrollWidth > window.innerWidth) {
    problems.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  }
  var out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = lines.concat(problems.map(function (p) { return 'problem: ' + p; })).join('\n');
  document.body.appendChild(out);
})();
</script>"#;

/// What [`LAYOUT_CHECKER`] found on a page.
pub struct Layout {
    /// Per chart: how many shapes it draws, its size and title.
    pub charts: Vec<String>,
    /// Clipped or overlapping texts, a page wider than the window.
    pub problems: Vec<String>,
}

/// Draws the page `html` (its own scripts removed, the checker added) in
/// headless Chromium at 960 px wide and returns what the checker found.
pub fn check_layout(chromium: &Path, dir: &Path, html: &str) -> Layout {
    let mut page = html.to_string();
    // A live page's own script would fetch and replace the charts.
    while let (Some(start), Some(end)) = (page.find("<script>"), page.find("</script>")) {
        page.replace_range(start..end + "</script>".len(), "");
    }
    let checked = dir.join("layout-check.html");
    std::fs::write(
        &checked,
        page.replace("</body>", &format!("{LAYOUT_CHECKER}</body>")),
    )
    .unwrap();
    let (dom, log) = run_chromium(
        chromium,
        dir,
        &[
            "--window-size=960,1200".into(),
            "--dump-dom".into(),
            format!("file://{}", checked.display()),
        ],
    );
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") || line.contains("Uncaught")),
            "a script error or console message: {line}\n{log}"
        );
    }
    let report = dom
        .split("<pre id=\"layout-check\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check did not run:\n{log}"));
    let report = report
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"");
    let (problems, charts): (Vec<String>, Vec<String>) = report
        .lines()
        .map(str::to_string)
        .partition(|l| l.starts_with("problem: "));
    Layout { charts, problems }
}

/// Where a screenshot goes.
pub enum Keep {
    /// Only in the test's directory.
    No,
    /// Also in `YCSB_SCREENSHOTS` (a directory: docs/ for the
    /// repository's pictures) when that is set.
    AsDocs,
}

/// A screenshot of the page at `url`, `width` x `height` pixels, as PNG
/// bytes, named `name`.
pub fn screenshot(
    chromium: &Path,
    dir: &Path,
    url: &str,
    size: (u32, u32),
    name: &str,
    keep: Keep,
) -> Vec<u8> {
    let png = dir.join(name);
    run_chromium(
        chromium,
        dir,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={},{}", size.0, size.1),
            "--hide-scrollbars".into(),
            url.to_string(),
        ],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    if let (Keep::AsDocs, Some(docs)) = (keep, std::env::var_os("YCSB_SCREENSHOTS")) {
        std::fs::write(Path::new(&docs).join(name), &bytes).unwrap();
    }
    bytes
}
