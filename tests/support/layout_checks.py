"""What a page looks like to a reader, measured from the DOM in a real browser: words broken
across lines, plot titles that overlap, legends over their plot, tables wider than the screen
that cannot scroll. Each is a JavaScript function `page.evaluate` runs on a selector."""

from __future__ import annotations

# Each word (a run of letters and digits: a hyphen, slash or dot may end a line) whose pieces sit
# on more than one line, in the visible text under `root`.
BROKEN_WORDS = """(root) => {
  const scope = document.querySelector(root);
  if (!scope) return ['(no ' + root + ')'];
  const broken = [];
  const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || !el.checkVisibility() || el.closest('svg, .js-plotly-plot, textarea')) continue;
    const words = /[A-Za-z0-9%]{2,}/g;
    for (let m = words.exec(node.textContent); m; m = words.exec(node.textContent)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
        .map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0] + ' in ' + (el.closest('[id]')?.id || el.tagName));
    }
  }
  return broken;
}"""

# Pairs of a plot's titles (figure, subplot and axis titles, annotations) whose boxes overlap,
# and legends that overlap a plotting area, in every plot under `root`.
OVERLAPS = """(root) => {
  const found = [];
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 &&
    a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const plot of document.querySelectorAll(root + ' .js-plotly-plot')) {
    if (!plot.checkVisibility()) continue;
    const titles = [...plot.querySelectorAll(
      '.gtitle, .g-xtitle text, .g-ytitle text, .annotation-text-g text, .xtitle, .ytitle')]
      .filter(t => t.textContent.trim()).map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    for (let i = 0; i < titles.length; i++)
      for (let j = i + 1; j < titles.length; j++)
        if (meets(titles[i][1], titles[j][1])) found.push(titles[i][0] + ' / ' + titles[j][0]);
    const areas = [...plot.querySelectorAll('.nsewdrag')].map(a => a.getBoundingClientRect());
    for (const legend of plot.querySelectorAll('.legend')) {
      const box = legend.getBoundingClientRect();
      if (areas.some(a => meets(a, box))) found.push('legend over the plot');
      for (const [text, title] of titles)
        if (meets(title, box)) found.push('legend over ' + text);
    }
  }
  return found;
}"""

# Tables whose right edge is past the screen and that nothing lets the reader scroll to.
CUT_TABLES = """(root) => {
  const cut = [];
  for (const table of document.querySelectorAll(root + ' table')) {
    if (!table.checkVisibility()) continue;
    const right = table.getBoundingClientRect().right;
    if (right <= window.innerWidth + 1) continue;
    let el = table, scrolls = false;
    while (el && el !== document.body) {
      const x = getComputedStyle(el).overflowX;
      if ((x === 'auto' || x === 'scroll') && el.scrollWidth > el.clientWidth) { scrolls = true; break; }
      el = el.parentElement;
    }
    if (!scrolls) cut.push((table.closest('[id]')?.id || 'table') + ' ends at ' + Math.round(right));
  }
  return cut;
}"""
