"""Headless Chromium for the browser tests: Debian's, driven by Selenium
through Debian's chromedriver (nothing downloaded), its console kept."""

import os

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def chrome(scratch, name, size="1400,1000"):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={size}",
              "--disable-background-networking", "--disable-component-update",
              "--no-first-run", f"--user-data-dir={os.path.join(scratch, 'chromium-' + name)}"):
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
