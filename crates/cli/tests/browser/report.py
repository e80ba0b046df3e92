"""perfq html reports, opened in headless Chromium (Debian's, driven by
Selenium through its chromedriver).

usage: report.py SCRATCH SCRIPT.json

SCRIPT.json lists pages and what to do on each:
  [{"page": PATH, "name": NAME, "click": FUNCTION-NAME or null,
    "select": [BUCKET0, BUCKET1] or null, "mode": "self"|"total",
    "thread": TID or null}]

For each page: the console must hold no error and the page must have
fetched nothing (its resource timing entries; its Content-Security-Policy
blocks every request, and a blocked one is a console error). Prints one
JSON object per page: the header, the top functions table as shown, the
butterfly after clicking the function (by a real click on its row), and
the table and range shares after dragging over the time line (a real
drag, from the first bucket's middle to the last's), the colours the
page paints (top-down categories in the table, the time line and the
flame graph's legend; each frame's colour and DSO; the legend's
entries), the flame graph's box before and after it is resized (as
CSS resize does: a new height on the box) in flame orientation, and,
where the capture has off-CPU time, the off-CPU flame graph and the
chosen thread's time per interval.
Screenshots go to SCRATCH/NAME-*.png.
"""

import json
import os
import sys

from chrome import chrome
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By


def table(driver, body_id):
    rows = []
    for tr in driver.find_elements(By.CSS_SELECTOR, f"#{body_id} tr"):
        cells = {}
        for td in tr.find_elements(By.TAG_NAME, "td"):
            cls = td.get_attribute("class")
            cells[cls] = td.text
        shares = {}
        for seg in tr.find_elements(By.CSS_SELECTOR, ".bar span[data-node]"):
            shares[seg.get_attribute("data-node")] = seg.get_attribute("data-share")
        if shares:
            cells["shares"] = shares
        rows.append(cells)
    return rows


# The colours as painted (computed styles), per place and top-down node,
# the flame graph's legend and frames, and its box.
COLOURS = """
const bg = (e) => getComputedStyle(e).backgroundColor;
const D = JSON.parse(document.getElementById('perfq-data').textContent);
const byNode = (sel) => {
  const out = {};
  for (const e of document.querySelectorAll(sel)) {
    const k = e.dataset.node, c = bg(e.tagName === 'SPAN' && e.querySelector('i') ? e.querySelector('i') : e);
    (out[k] = out[k] || []).includes(c) || out[k].push(c);
  }
  return out;
};
const frames = {};
for (const f of document.querySelectorAll('#flame .frame')) {
  const dso = D.functions[Number(f.dataset.function)][1];
  (frames[dso] = frames[dso] || []).includes(bg(f)) || frames[dso].push(bg(f));
}
const view = document.getElementById('flame-view');
const style = getComputedStyle(view);
return {
  bars: byNode('#functions-body .bar span[data-node]'),
  timeline: byNode('#timeline .col span[data-node]'),
  range: byNode('#range-topdown span[data-node]'),
  table_legend: byNode('#functions-legend span[data-node]'),
  legend: [...document.querySelectorAll('#flame-legend span[data-key]')].map((e) => ({
    key: e.dataset.key, node: e.dataset.node || null, dso: e.dataset.dso || null,
    dsos: e.dataset.dsos ? JSON.parse(e.dataset.dsos) : null, colour: bg(e.querySelector('i')),
    label: e.textContent})),
  caption: document.getElementById('flame-caption').textContent,
  frames: frames,
  view: {height: view.getBoundingClientRect().height, window: window.innerHeight,
         resize: style.resize, overflow_y: style.overflowY},
};
"""

# The off-CPU flame graph as drawn: whether it is shown, its frames, and
# the time of its outermost frames (the process names).
OFF_CPU = """
const frames = [...document.querySelectorAll('#off-cpu-flame .frame')];
return {shown: !document.getElementById('off-cpu-section').hidden, frames: frames.length,
        outermost_ns: frames.filter((f) => f.style.top === '0px')
          .reduce((a, f) => a + Number(f.dataset.ns), 0),
        names: [...new Set(frames.map((f) => f.title.split('\\n')[0]))]};
"""

# The chosen thread's time per interval under the time line, as drawn:
# [bucket, [running, waiting for a CPU, waiting otherwise] ns].
THREAD_TIME = """
return {shown: !document.getElementById('thread-time').hidden,
        cols: [...document.querySelectorAll('#thread-spans .col')].map(
          (c) => [Number(c.dataset.bucket), JSON.parse(c.dataset.ns)])};
"""

# Flame orientation, then the box made `arguments[0]` px tall: the frames
# once the page has laid them out again (it does on the ResizeObserver's
# call, after the next layout), or after a second.
RESIZED = """
const [height, done] = arguments;
document.getElementById('flame-flip').click();
const view = document.getElementById('flame-view');
const flame = document.getElementById('flame');
view.style.height = height + 'px';
const start = performance.now();
const check = () => {
  if (flame.offsetHeight < view.clientHeight && performance.now() - start < 1000) {
    requestAnimationFrame(check);
    return;
  }
  const frames = [...flame.querySelectorAll('.frame')];
  done({view_height: view.clientHeight, view_width: view.clientWidth,
        flame_height: flame.offsetHeight, ms: performance.now() - start,
        frames_bottom: Math.max(...frames.map((f) => f.offsetTop + f.offsetHeight)),
        // Where the layout put them (a sliver's box is wider: its padding).
        frames_right: Math.max(...frames.map((f) => parseFloat(f.style.left) + parseFloat(f.style.width)))});
};
requestAnimationFrame(check);
"""


def main():
    scratch, script = sys.argv[1], sys.argv[2]
    with open(script) as f:
        pages = json.load(f)
    driver = chrome(scratch, "report", "1400,1000")
    problems = []
    try:
        for p in pages:
            name = p["name"]
            driver.get("file://" + os.path.abspath(p["page"]))
            out = {"name": name}
            out["meta"] = {dt.text: dd.text for dt, dd in zip(
                driver.find_elements(By.CSS_SELECTOR, "#meta dt"),
                driver.find_elements(By.CSS_SELECTOR, "#meta dd"))}
            data = driver.execute_script(
                "const d = JSON.parse(document.getElementById('perfq-data').textContent);"
                "return {buckets: d.buckets, event: d.event.name}")
            out["buckets"] = data["buckets"]
            out["event"] = data["event"]
            out["resources"] = driver.execute_script(
                "return performance.getEntriesByType('resource').map(e => e.name)")
            if p.get("mode") == "total":
                driver.find_element(By.CSS_SELECTOR, ".tabs button[data-mode=total]").click()
            out["functions"] = table(driver, "functions-body")
            if driver.find_element(By.ID, "diff").is_displayed():
                out["diff"] = table(driver, "diff-body")
                driver.find_element(By.ID, "flame-diff").click()
                driver.execute_script("document.getElementById('diff').scrollIntoView()")
                driver.save_screenshot(os.path.join(scratch, f"{name}-diff.png"))
            out["range_topdown"] = {s.get_attribute("data-node"): s.find_element(By.TAG_NAME, "b").text
                                    for s in driver.find_elements(By.CSS_SELECTOR, "#range-topdown span")}
            driver.save_screenshot(os.path.join(scratch, f"{name}-page.png"))
            if p.get("click"):
                rows = [tr for tr in driver.find_elements(By.CSS_SELECTOR, "#functions-body tr")
                        if tr.find_element(By.CSS_SELECTOR, "td.name").text == p["click"]]
                if not rows:
                    problems.append(f"{name}: no row of {p['click']}")
                else:
                    rows[0].click()
                    out["callers"] = table(driver, "callers-body")
                    out["callees"] = table(driver, "callees-body")
                    driver.execute_script("document.getElementById('butterfly').scrollIntoView()")
                    driver.save_screenshot(os.path.join(scratch, f"{name}-butterfly.png"))
            if p.get("select"):
                b0, b1 = p["select"]
                box = driver.find_element(By.ID, "timeline")
                count = driver.execute_script(
                    "return JSON.parse(document.getElementById('perfq-data').textContent).buckets.count")
                w = box.size["width"]
                x = lambda b: int((b + 0.5) * w / count - w / 2)
                driver.execute_script("window.scrollTo(0, 0)")
                ActionChains(driver).move_to_element_with_offset(box, x(b0), 0).click_and_hold() \
                    .move_to_element_with_offset(box, x(b1), 0).release().perform()
                out["selected"] = driver.execute_script("return window.perfqReport.state().range")
                out["range"] = driver.find_element(By.ID, "range").text
                out["range_topdown_selected"] = {
                    s.get_attribute("data-node"): s.find_element(By.TAG_NAME, "b").text
                    for s in driver.find_elements(By.CSS_SELECTOR, "#range-topdown span")}
                out["functions_selected"] = table(driver, "functions-body")
                driver.save_screenshot(os.path.join(scratch, f"{name}-range.png"))
            if p.get("thread"):
                # Back to the whole capture, then one thread by its tid.
                driver.execute_script("window.perfqReport.select(null)")
                from selenium.webdriver.support.ui import Select
                sel = Select(driver.find_element(By.ID, "thread"))
                match = [o for o in sel.options if f"/{p['thread']} (" in o.text]
                if not match:
                    problems.append(f"{name}: no thread {p['thread']}")
                else:
                    sel.select_by_visible_text(match[0].text)
                    out["functions_thread"] = table(driver, "functions-body")
                    out["thread_time"] = driver.execute_script(THREAD_TIME)
                    if out["thread_time"]["shown"]:
                        driver.execute_script("document.getElementById('timeline').scrollIntoView()")
                        driver.save_screenshot(os.path.join(scratch, f"{name}-thread.png"))
            out["off_cpu"] = driver.execute_script(OFF_CPU)
            if out["off_cpu"]["shown"]:
                driver.execute_script("document.getElementById('off-cpu-section').scrollIntoView()")
                driver.save_screenshot(os.path.join(scratch, f"{name}-off-cpu.png"))
            driver.execute_script("document.getElementById('flame').scrollIntoView()")
            driver.save_screenshot(os.path.join(scratch, f"{name}-flame.png"))
            out["frames"] = len(driver.find_elements(By.CSS_SELECTOR, "#flame .frame"))
            out["colours"] = driver.execute_script(COLOURS)
            out["resized"] = driver.execute_async_script(RESIZED, 700)
            out["console"] = [e["message"] for e in driver.get_log("browser")
                              if e["level"] in ("SEVERE", "WARNING")]
            print(json.dumps(out))
    finally:
        driver.quit()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


main()
