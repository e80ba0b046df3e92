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
drag, from the first bucket's middle to the last's). Screenshots go to
SCRATCH/NAME-*.png.
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
            driver.execute_script("document.getElementById('flame').scrollIntoView()")
            driver.save_screenshot(os.path.join(scratch, f"{name}-flame.png"))
            out["frames"] = len(driver.find_elements(By.CSS_SELECTOR, "#flame .frame"))
            out["console"] = [e["message"] for e in driver.get_log("browser")
                              if e["level"] in ("SEVERE", "WARNING")]
            print(json.dumps(out))
    finally:
        driver.quit()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


main()
