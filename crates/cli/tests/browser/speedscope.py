"""speedscope files checked by speedscope itself.

usage: speedscope.py RELEASE SCRATCH FILE...

RELEASE is npm's speedscope `dist/release` folder (its page and its
published file-format schema). Each FILE must validate against the schema,
then load in speedscope's page in headless Chromium (Debian's, driven
through its chromedriver by Selenium): the page names the profile in its
title, shows no error, and the browser's console has no error. A
screenshot of each is left in SCRATCH. Exits non-zero with the reasons.
"""

import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

import jsonschema
from chrome import chrome


def serve(release, files_dir):
    """An HTTP server on loopback: /speedscope/ is the page, /files/ the
    profiles (the page fetches a profile by URL; file:// pages cannot)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            path = urllib.parse.unquote(path.split("?", 1)[0].split("#", 1)[0])
            for prefix, root in (("/speedscope/", release), ("/files/", files_dir)):
                if path.startswith(prefix):
                    return os.path.join(root, os.path.normpath(path[len(prefix):]).lstrip("/."))
            return "/nonexistent"

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    release, scratch, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(os.path.join(release, "file-format-schema.json")) as f:
        schema = json.load(f)
    problems = []
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
        for e in errors[:5]:
            problems.append(f"{path}: schema: {e.message} at {list(e.absolute_path)}")

    files_dir = os.path.dirname(os.path.abspath(files[0]))
    server = serve(release, files_dir)
    port = server.server_address[1]
    driver = chrome(scratch, "speedscope", "1400,900")
    try:
        for i, path in enumerate(files):
            name = os.path.basename(path)
            with open(path) as f:
                title = json.load(f)["name"]
            # A query of its own per file: a new hash alone would not
            # load the page again.
            url = (f"http://127.0.0.1:{port}/speedscope/index.html?{i}#profileURL="
                   + urllib.parse.quote(f"http://127.0.0.1:{port}/files/{name}", safe=""))
            driver.get(url)
            deadline = time.time() + 30
            while time.time() < deadline and not driver.title.startswith(title):
                time.sleep(0.2)
            body = driver.find_element("tag name", "body").text
            if not driver.title.startswith(title):
                problems.append(f"{name}: the page's title is {driver.title!r}, not the profile's "
                                f"{title!r}; the page says: {body[:300]!r}")
            if "Something went wrong" in body or "Failed to" in body:
                problems.append(f"{name}: the page shows an error: {body[:300]!r}")
            time.sleep(0.5)
            driver.save_screenshot(os.path.join(scratch, name + ".png"))
            for entry in driver.get_log("browser"):
                # The favicon aside, nothing the page logs as an error.
                if entry["level"] == "SEVERE" and "favicon" not in entry["message"]:
                    problems.append(f"{name}: console: {entry['message']}")
    finally:
        driver.quit()
        server.shutdown()
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{len(files)} files valid and loaded")


main()
