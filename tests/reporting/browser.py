"""A real headless Chromium for the report tests: found on PATH, installed when missing.

``find_or_install_chromium`` returns the browser's path or the reason there is none (the test
then skips with it). When ``chromium`` is missing and we run as root with apt, it is installed
with ``apt-get install --no-install-recommends chromium`` (Debian), under a file lock so that
pytest-xdist workers do not race each other for the dpkg lock.

``Browser`` drives one headless Chromium over the DevTools protocol (on a pipe: no websocket
library, no new dependency): a viewport of any size, a script's result, a PNG screenshot. Each
browser gets its own profile directory and is closed (killed if it hangs) on exit.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

INSTALL_TIMEOUT_S = 300.0
BROWSER_TIMEOUT_S = 120.0
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LOCK_PATH = Path(tempfile.gettempdir()) / "payment-conformance-chromium-install.lock"


def find_chromium() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def find_or_install_chromium() -> tuple[str | None, str]:
    """(path, "") when a Chromium is usable, else (None, why not)."""
    found = find_chromium()
    if found:
        return found, ""
    if os.environ.get("PAYMENT_CONFORMANCE_NO_BROWSER_INSTALL"):
        return None, "chromium is not on PATH and PAYMENT_CONFORMANCE_NO_BROWSER_INSTALL is set"
    apt = shutil.which("apt-get")
    if apt is None:
        return None, "chromium is not on PATH and there is no apt-get to install it"
    if os.geteuid() != 0:
        return None, "chromium is not on PATH and installing it needs root (apt-get)"
    LOCK_PATH.touch(exist_ok=True)
    with LOCK_PATH.open("r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it right now
        found = find_chromium()
        if found:
            return found, ""
        error = _apt_install(apt)
        if error and "Unable to locate package" in error:
            _apt(apt, "update")  # a fresh machine may have no package lists yet
            error = _apt_install(apt)
    found = find_chromium()
    if found:
        return found, ""
    return None, f"chromium is not on PATH and `apt-get install chromium` failed: {error}"


def _apt_install(apt: str) -> str:
    return _apt(apt, "install", "-y", "--no-install-recommends", "chromium")


def _apt(apt: str, *args: str) -> str:
    """Run apt-get; return "" on success, else the tail of its output."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = [apt, "-q", "-o", "DPkg::Lock::Timeout=120", *args]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=env
        )
    except subprocess.TimeoutExpired:
        return f"apt-get {args[0]} did not finish within {INSTALL_TIMEOUT_S:.0f} s"
    except OSError as exc:
        return f"apt-get could not start: {exc}"
    if done.returncode == 0:
        return ""
    tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
    return f"exit {done.returncode}: " + " / ".join(tail)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; ValueError if the file is not a PNG."""
    head = path.read_bytes()[:24]
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


class BrowserError(AssertionError):
    """Chromium did not start, answer or finish in time; the message says what it was doing."""


class Browser:
    """One headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4).

    Only the few commands the tests need: open a page at a viewport size (device metrics, so
    any width works; ``--window-size`` cannot go below 500 px), evaluate a script in it (the
    DevTools evaluation is not subject to the page's Content-Security-Policy, so the report
    is tested exactly as shipped) and capture a PNG screenshot.
    """

    def __init__(self, executable: str, scratch: Path) -> None:
        self._profile = Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=scratch))
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_pipes() -> None:  # in the child, before exec: the pipes become fds 3 and 4
            read_end = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        command = [
            executable,
            "--headless=new",
            "--remote-debugging-pipe",
            "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={self._profile}",
            "about:blank",
        ]
        self._stderr = tempfile.TemporaryFile(dir=scratch)  # noqa: SIM115 - closed in close()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            close_fds=False,
            preexec_fn=wire_pipes,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self._session = ""
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        target = self.call("Target.createTarget", url="about:blank", _session=False)
        attached = self.call(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True, _session=False
        )
        self._session = attached["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._process.poll() is None:
                with contextlib.suppress(BrowserError):
                    self.call("Browser.close", _session=False, _timeout=20.0)
                try:
                    self._process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait(timeout=30)
        finally:
            for fd in (self._to_child, self._from_child):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._stderr.close()
            shutil.rmtree(self._profile, ignore_errors=True)

    def open(self, url: str, width: int, height: int) -> None:
        """Show ``url`` in a ``width`` x ``height`` CSS-pixel viewport and wait for its load."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self._events.clear()
        navigated = self.call("Page.navigate", url=url)
        if navigated.get("errorText"):
            raise BrowserError(f"chromium could not open {url}: {navigated['errorText']}")
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` (a promise is awaited) in the open page."""
        answer = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise BrowserError(f"the page script failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, out: Path, width: int, height: int) -> Path:
        """A PNG of the page's top ``width`` x ``height`` CSS pixels (beyond the viewport too)."""
        shot = self.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        out.write_bytes(base64.b64decode(shot["data"]))
        return out

    # -- the protocol: JSON messages, each ended by a NUL byte ----------------------------------
    def call(
        self,
        method: str,
        *,
        _session: bool = True,
        _timeout: float = BROWSER_TIMEOUT_S,
        **params: Any,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if _session and self._session:
            message["sessionId"] = self._session
        data = json.dumps(message).encode("utf-8") + b"\0"
        try:
            while data:
                data = data[os.write(self._to_child, data) :]
        except OSError as exc:
            gone = f"chromium is gone ({exc}) before {method}{self._stderr_tail()}"
            raise BrowserError(gone) from exc
        deadline = time.monotonic() + _timeout
        while True:
            reply = self._receive(deadline, method)
            if reply.get("id") == message["id"]:
                if "error" in reply:
                    raise BrowserError(f"chromium refused {method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self._events.append(reply)

    def wait_for(self, event: str, timeout: float = BROWSER_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for seen in self._events:
                if seen["method"] == event:
                    self._events.remove(seen)
                    return seen
            reply = self._receive(deadline, f"waiting for {event}")
            if "method" in reply:
                self._events.append(reply)

    def _receive(self, deadline: float, doing: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"chromium did not answer in time ({doing})")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited ({doing}){self._stderr_tail()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        reply: dict[str, Any] = json.loads(raw)
        return reply

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return f"; its stderr ends:\n{tail}" if tail else ""
