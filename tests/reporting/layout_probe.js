// Evaluated in the report by test_report_in_browser (over the DevTools protocol, after load):
// where the verdict, the section table and a failure's evidence are, whether a reader can see
// them (text: the first words they show), and what, if anything, is wider than the viewport
// or cut off by its box.
(() => {
  const width = document.documentElement.clientWidth;
  const describe = (el) =>
    el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "") +
    (el.closest("section[id]") ? " in section#" + el.closest("section[id]").id : "");
  const clipsX = (el) => getComputedStyle(el).overflowX !== "visible";
  const insideClipper = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (clipsX(up)) return true;
    }
    return false;
  };
  const look = (selector) => {
    const el = document.querySelector(selector);
    if (!el) return { selector, found: false };
    el.scrollIntoView({ block: "start" });
    const r = el.getBoundingClientRect();
    const probeY = Math.min(r.top + Math.min(r.height / 2, 20), innerHeight - 1);
    const hit = document.elementFromPoint(r.left + Math.min(r.width / 2, 40), probeY);
    const result = {
      selector,
      found: true,
      rendered: el.checkVisibility({ opacityProperty: true, visibilityProperty: true }),
      width: r.width,
      height: r.height,
      left: r.left,
      right: r.right,
      top: r.top + scrollY,
      bottom: r.bottom + scrollY,
      uncovered: hit !== null && (hit === el || el.contains(hit)),
      text: el.innerText.replace(/\s+/g, " ").slice(0, 160),
    };
    scrollTo(0, 0);
    return result;
  };
  const overflowing = [];
  const cutOff = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if ((r.right > width + 0.5 || r.left < -0.5) && r.width > 0 && !insideClipper(el)) {
      overflowing.push({ element: describe(el), left: r.left, right: r.right });
    }
    if (clipsX(el) && el.scrollWidth > el.clientWidth + 1) {
      cutOff.push({ element: describe(el), scrollWidth: el.scrollWidth, clientWidth: el.clientWidth });
    }
  }
  return {
    viewport: { width, height: innerHeight },
    pageScrollWidth: document.documentElement.scrollWidth,
    overflowing: overflowing.slice(0, 20),
    cutOff: cutOff.slice(0, 20),
    verdict: look(".verdict"),
    sections: look("#sections table"),
    request: look("#failures .exchange > div:first-child"),
    response: look("#failures .exchange > div:last-child"),
  };
})()
