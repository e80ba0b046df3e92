// perfq html: the page's code. Everything it shows is computed here from
// the data perfq wrote into the page (the `perfq-data` script element):
// the call tree (functions named as perf report names them), the samples
// of one event per time interval, thread and call-tree node, the
// top-down answers, and off-CPU time (folded stacks, and each thread's
// time per interval). No request leaves the page.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("perfq-data").textContent);
  const nN = D.nodes.parent.length;
  const nF = D.functions.length;
  const S = D.samples;
  const TD = D.topdown;
  const level1 = TD ? TD.nodes.filter((n) => n.level === 1) : [];
  const level2 = TD ? TD.nodes.filter((n) => n.level === 2) : [];
  const state = { range: null, mode: "self", sort: null, asc: false, search: "",
    selected: null, zoom: 0, flame: false, level2: false, flameSearch: "", byChange: false, thread: null };

  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  };
  const pct = (x) => (100 * x).toFixed(2) + "%";
  const fmt = (x) => Math.round(x).toLocaleString("en-US");

  // Children lists of the call tree (nodes come parents first).
  const children = Array.from({ length: nN }, () => []);
  for (let n = 1; n < nN; n++) children[D.nodes.parent[n]].push(n);

  // Per function with top-down numbers: the category of its largest
  // level-1 share of its *total* samples (a caller is coloured by where
  // its callees' time goes too, which is what a frame's width shows).
  const NO_TOPDOWN = "#c9ccd3";
  const catColor = {};
  if (TD) for (const n of TD.nodes) catColor[n.name] = n.color;
  function categoryColor(f) {
    const t = TD.total[f];
    let best = null;
    if (t) {
      for (const n of level1) {
        const v = t.values[TD.nodes.indexOf(n)];
        if (v !== null && (best === null || v > best[1])) best = [n.name, v];
      }
    }
    return best ? catColor[best[0]] : NO_TOPDOWN;
  }

  // Without top-down numbers, by DSO: Paul Tol's "light" colours
  // (colour-blind safe, made to carry dark text; its pink left out, which
  // deuteranopes take for the grey) go to the DSOs with the most area in
  // the flame graph, the rest share grey, so no two DSOs named in the
  // legend look alike.
  const DSO_COLORS = ["#77AADD", "#EE8866", "#EEDD88", "#99DDFF", "#44BB99", "#BBCC33"];
  const OTHER_DSOS = "#DDDDDD";
  function rankDsos(tot) {
    const area = new Map();
    for (let n = 1; n < nN; n++) {
      const dso = D.functions[D.nodes.fn[n]][1];
      area.set(dso, (area.get(dso) || 0) + tot[n]);
    }
    return [...area.keys()].filter((d) => area.get(d) > 0)
      .sort((a, b) => area.get(b) - area.get(a) || a.localeCompare(b));
  }

  // Against a base capture: each function's change in share of samples
  // (this − base, percentage points) and its significance, as perfq diff.
  const DF = D.diff;
  const change = new Map();
  if (DF) {
    const c = DF.columns;
    for (let i = 0; i < c.symbol.length; i++) {
      change.set(c.symbol[i] + "\u0000" + c.dso[i], [c.change_pp[i], c.p_value[i]]);
    }
  }
  const mark = (p) => (p < 0.001 ? "***" : p < 0.01 ? "**" : p < 0.05 ? "*" : "");
  const maxChange = Math.max(1e-9, ...[...change.values()].map((v) => Math.abs(v[0])));
  function changeColor(f) {
    const v = change.get(D.functions[f][0] + "\u0000" + D.functions[f][1]);
    if (!v || v[1] >= 0.05) return "#d5d7dc";
    const t = 0.25 + 0.75 * Math.min(1, Math.abs(v[0]) / maxChange);
    const l = 90 - 40 * t;
    return v[0] > 0 ? `hsl(0, 75%, ${l}%)` : `hsl(215, 75%, ${l}%)`;
  }
  function diffTable() {
    if (!DF) return;
    $("diff").hidden = false;
    $("diff-base").textContent = DF.base;
    $("diff-note").textContent = `${DF.event}: ${fmt(DF.base_samples)} samples in the base, ` +
      `${fmt(DF.samples)} here; change in share of samples, largest first; ` +
      "*** p < 0.001, ** p < 0.01, * p < 0.05 (two-proportion z-test)";
    const c = DF.columns;
    const body = $("diff-body");
    for (let i = 0; i < Math.min(c.symbol.length, 100); i++) {
      const ch = c.change_pp[i];
      body.append(el("tr", {},
        el("td", { class: "name", title: c.symbol[i], text: c.symbol[i] }),
        el("td", { class: "dso", text: c.dso[i] }),
        el("td", { class: "a-samples", text: fmt(c.a_samples[i]) }),
        el("td", { class: "b-samples", text: fmt(c.b_samples[i]) }),
        el("td", { class: "a-pct", text: c.a_pct[i].toFixed(2) + "%" }),
        el("td", { class: "b-pct", text: c.b_pct[i].toFixed(2) + "%" }),
        el("td", { class: "change", text: (ch > 0 ? "+" : "") + ch.toFixed(2) + " pp" }),
        el("td", { class: "p-value", text: c.p_value[i].toPrecision(2) }),
        el("td", { class: "mark", text: mark(c.p_value[i]) })));
    }
  }

  // The sums of the samples in the selected range.
  function aggregate() {
    const at = new Float64Array(nN), atP = new Float64Array(nN);
    const [b0, b1] = state.range || [-Infinity, Infinity];
    let count = 0, period = 0;
    const th = state.thread;
    for (let i = 0; i < S.node.length; i++) {
      const b = S.bucket[i];
      if (b < b0 || b > b1 || (th !== null && S.thread[i] !== th)) continue;
      at[S.node[i]] += S.count[i];
      atP[S.node[i]] += S.period[i];
      count += S.count[i];
      period += S.period[i];
    }
    const tot = Float64Array.from(at), totP = Float64Array.from(atP);
    for (let n = nN - 1; n > 0; n--) {
      tot[D.nodes.parent[n]] += tot[n];
      totP[D.nodes.parent[n]] += totP[n];
    }
    // The functions' sums, exact (the call tree may be pruned).
    const self = new Float64Array(nF), selfP = new Float64Array(nF);
    const total = new Float64Array(nF), totalP = new Float64Array(nF);
    const FS = D.function_sums;
    for (let i = 0; th === null && i < FS.fn.length; i++) {
      const b = FS.bucket[i];
      if (b < b0 || b > b1) continue;
      const f = FS.fn[i];
      self[f] += FS.self[i];
      total[f] += FS.total[i];
      selfP[f] += FS.self_period[i];
      totalP[f] += FS.total_period[i];
    }
    // A function counts once per sample however deep it recurses: the
    // outermost node of it on each path is where its callers and callees
    // are read.
    const onPath = new Int32Array(nF);
    const outermost = new Uint8Array(nN);
    const stack = [[0, 0]];
    while (stack.length) {
      const top = stack[stack.length - 1];
      const n = top[0];
      if (top[1] === 0 && n > 0) {
        const f = D.nodes.fn[n];
        if (onPath[f] === 0) {
          outermost[n] = 1;
          // One thread: the sums from the call tree (the per-function
          // sums are of every thread).
          if (th !== null) {
            total[f] += tot[n];
            totalP[f] += totP[n];
          }
        }
        if (th !== null) {
          self[f] += at[n];
          selfP[f] += atP[n];
        }
        onPath[f]++;
      }
      if (top[1] < children[n].length) {
        stack.push([children[n][top[1]++], 0]);
      } else {
        stack.pop();
        if (n > 0) onPath[D.nodes.fn[n]]--;
      }
    }
    return { at, tot, self, selfP, total, totalP, outermost, count, period };
  }
  let A = aggregate();

  // Colours fixed on the whole capture: a range or thread chosen later
  // does not repaint a DSO.
  const dsos = TD ? [] : rankDsos(A.tot);
  const dsoColor = new Map(dsos.slice(0, DSO_COLORS.length).map((d, i) => [d, DSO_COLORS[i]]));
  const fnColor = D.functions.map(([, dso], f) =>
    TD ? categoryColor(f) : dsoColor.get(dso) || OTHER_DSOS);

  // A legend's entry: a swatch and its label (`attrs` say what it
  // stands for, for scripts reading the page).
  const chip = (attrs, color, label) =>
    el("span", attrs, el("i", { style: `background:${color}` }), label);
  const nodeLabel = (n) => n.label.replace(/_/g, " ");
  const categoryChips = () => level1.map((n) =>
    chip({ "data-key": n.name, "data-node": n.name }, n.color, nodeLabel(n)));

  // Header.
  function header() {
    const dl = $("meta");
    dl.textContent = "";
    for (const [k, v] of D.meta) dl.append(el("dt", { text: k }), el("dd", { text: v }));
    const notes = $("notes");
    notes.textContent = "";
    for (const n of D.notes) notes.append(el("div", { class: "note warn", text: n }));
  }

  // A stacked bar of shares, with its tooltip.
  function bar(values, se, nodes, samples) {
    const b = el("span", { class: "bar" });
    const lines = [];
    for (const n of nodes) {
      const i = TD.nodes.indexOf(n);
      const v = values[i];
      if (v === null) continue;
      const seg = el("span", { "data-node": n.name, "data-share": pct(v) });
      seg.style.width = Math.max(0, Math.min(1, v)) * 100 + "%";
      seg.style.background = n.color;
      b.append(seg);
      lines.push(`${n.label}: ${pct(v)} ± ${se[i] === null ? "?" : pct(se[i])}`);
    }
    b.title = lines.join("\n") + `\n${fmt(samples)} top-down samples`;
    return b;
  }

  // Top functions.
  function functionsTable() {
    const body = $("functions-body");
    body.textContent = "";
    const key = state.sort || state.mode;
    const q = state.search.toLowerCase();
    const rows = [];
    for (let f = 0; f < nF; f++) {
      if (A.total[f] === 0) continue;
      const [name, dso] = D.functions[f];
      if (q && !name.toLowerCase().includes(q) && !dso.toLowerCase().includes(q)) continue;
      rows.push(f);
    }
    const val = (f) => ({ self: A.self[f], total: A.total[f], name: D.functions[f][0],
      dso: D.functions[f][1], period: state.mode === "self" ? A.selfP[f] : A.totalP[f] })[key];
    rows.sort((a, b) => {
      const x = val(a), y = val(b);
      const c = typeof x === "string" ? x.localeCompare(y) : y - x;
      return (state.asc ? -c : c) || a - b;
    });
    $("functions-shown").textContent =
      `${Math.min(rows.length, 200)} of ${rows.length} functions` +
      (state.range ? " in the selected time range" : "");
    for (const f of rows.slice(0, 200)) {
      const [name, dso] = D.functions[f];
      const tr = el("tr", { class: "fn" + (state.selected === f ? " selected" : ""),
        "data-function": String(f) });
      tr.append(
        el("td", { class: "name", title: name, text: name }),
        el("td", { class: "dso", text: dso }),
        el("td", { class: "self-pct", text: pct(A.self[f] / A.count) }),
        el("td", { class: "total-pct", text: pct(A.total[f] / A.count) }),
        el("td", { class: "self-samples", text: fmt(A.self[f]) }),
        el("td", { class: "total-samples", text: fmt(A.total[f]) }),
        el("td", { class: "period", text: fmt(state.mode === "self" ? A.selfP[f] : A.totalP[f]) }),
      );
      if (TD) {
        const t = (state.mode === "self" ? TD.self : TD.total)[f];
        const cell = el("td", { class: "topdown" });
        const flags = el("td", { class: "flags" });
        if (t) {
          cell.append(bar(t.values, t.se, level1, t.samples));
          if (state.level2 && level2.length) cell.append(" ", bar(t.values, t.se, level2, t.samples));
          if (t.flagged.length) {
            // The deepest flagged nodes say most: their parents are
            // flagged by construction.
            const deepest = t.flagged.filter((name) =>
              !TD.nodes.some((n) => n.parent === name && t.flagged.includes(n.name)));
            const label = (name) => TD.nodes.find((n) => n.name === name).label.replace(/_/g, " ");
            flags.append(el("span", { class: "flag", title: "flagged: " + t.flagged.map(label).join(", "),
              text: "⚑ " + deepest.map(label).join(", ") }));
          }
        }
        tr.append(cell, flags);
      }
      tr.addEventListener("click", () => openFunction(f));
      body.append(tr);
    }
  }

  // Callers and callees of one function, in the selected range.
  function butterfly(f) {
    const callers = new Map(), callees = new Map();
    let selfIn = 0;
    for (let n = 1; n < nN; n++) {
      // Each sample once: at the outermost node of the function on its
      // path (recursion below it is a callee, the function itself).
      if (D.nodes.fn[n] !== f || !A.outermost[n]) continue;
      selfIn += A.at[n];
      const p = D.nodes.parent[n];
      const pf = p === 0 ? -1 : D.nodes.fn[p];
      callers.set(pf, (callers.get(pf) || 0) + A.tot[n]);
      for (const c of children[n]) {
        const cf = D.nodes.fn[c];
        callees.set(cf, (callees.get(cf) || 0) + A.tot[c]);
      }
    }
    let total = 0;
    for (const v of callers.values()) total += v;
    return { callers, callees, self: selfIn, total };
  }

  function openFunction(f) {
    state.selected = f;
    const b = butterfly(f);
    const [name, dso] = D.functions[f];
    $("butterfly-title").textContent = `${name} (${dso}): ${fmt(b.total)} samples`;
    const fill = (id, m, extra) => {
      const body = $(id);
      body.textContent = "";
      const rows = [...m.entries()].sort((a, b2) => b2[1] - a[1] || a[0] - b2[0]);
      if (extra) rows.push(extra);
      for (const [g, v] of rows) {
        const label = g === -1 ? "(root)" : g === -2 ? "(self)" : D.functions[g][0];
        const tr = el("tr", { class: "fn", "data-function": String(g) },
          el("td", { class: "name", text: label }),
          el("td", { class: "dso", text: g >= 0 ? D.functions[g][1] : "" }),
          el("td", { class: "share", text: pct(b.total ? v / b.total : 0) }),
          el("td", { class: "samples", text: fmt(v) }));
        if (g >= 0) tr.addEventListener("click", () => openFunction(g));
        body.append(tr);
      }
    };
    fill("callers-body", b.callers);
    fill("callees-body", b.callees, b.self > 0 ? [-2, b.self] : null);
    $("butterfly").hidden = false;
    for (const tr of document.querySelectorAll("#functions-body tr")) {
      tr.classList.toggle("selected", tr.dataset.function === String(f));
    }
  }

  // What the table's bars and flags are of: they follow self / total.
  function functionsLegend() {
    if (!TD) return;
    const box = $("functions-legend");
    box.hidden = false;
    box.textContent = "";
    const of = state.mode === "self" ? "self samples (its own)" : "total samples (inclusive: with its callees')";
    const l2 = level2.length ? "; level 2 in its parent's shades" : "";
    box.append(el("span", { class: "caption",
      text: `Bars: level-1 shares of each function's ${of}; ⚑ flagged bottlenecks${l2}:` }),
    ...categoryChips());
  }

  // What a frame's colour says, in words and swatches. It must match
  // fnColor and changeColor.
  function flameLegend() {
    const box = $("flame-legend");
    box.textContent = "";
    const caption = (text) => el("span", { class: "caption", id: "flame-caption", text });
    if (state.byChange) {
      box.append(caption("Colour: each function's change in share of samples against the base (darker: larger):"),
        chip({ "data-key": "more" }, "hsl(0, 75%, 55%)", "more here than in the base"),
        chip({ "data-key": "less" }, "hsl(215, 75%, 55%)", "less"),
        chip({ "data-key": "same" }, "#d5d7dc", "no significant change (p ≥ 0.05)"));
    } else if (TD) {
      box.append(caption("Colour: each function's largest level-1 share of its total (inclusive) " +
        "samples, as the table shows under total:"),
      ...categoryChips(), chip({ "data-key": "none" }, NO_TOPDOWN, "no top-down numbers"));
    } else {
      box.append(caption("Colour: each function's DSO (there are no top-down numbers):"),
        ...dsos.slice(0, DSO_COLORS.length).map((d) => chip({ "data-key": "dso", "data-dso": d }, dsoColor.get(d), d)));
      const rest = dsos.slice(DSO_COLORS.length);
      // A few are named; many are counted, named in the tooltip.
      if (rest.length) {
        box.append(chip({ "data-key": "other", "data-dsos": JSON.stringify(rest), title: rest.join("\n") },
          OTHER_DSOS, rest.length <= 3 ? rest.join(", ") : `${rest.length} other DSOs`));
      }
    }
  }

  // The frames to draw of a tree from node `root`: [node, x, depth, width]
  // and the deepest depth; `kids[n]` are node n's children, `tot(n)` its
  // count (node 0 is the tree's root, not drawn). Frames narrower than
  // half a pixel are left out.
  function layoutFrames(kids, tot, root, width) {
    const rootTotal = tot(root);
    const frames = [];
    let maxDepth = 0;
    if (!rootTotal) return { frames, maxDepth };
    const walk = [[root, 0, 0]];
    while (walk.length) {
      const [n, x, depth] = walk.pop();
      const w = tot(n) / rootTotal * width;
      if (w < 0.5) continue;
      if (n !== 0) frames.push([n, x, depth, w]);
      maxDepth = Math.max(maxDepth, depth);
      let cx = x;
      for (const c of kids[n]) {
        if (tot(c) === 0) continue;
        walk.push([c, cx, n === 0 ? depth : depth + 1]);
        cx += tot(c) / rootTotal * width;
      }
    }
    return { frames, maxDepth };
  }

  // Draws `frames` into `box`, the scrolled `view`'s content (icicle:
  // roots on top; `flip`: roots at the bottom of the box, however tall
  // the user makes it). `describe(n)` gives a frame's name, tooltip,
  // colour, attributes and search mark; a click calls `open(n)`.
  const ROW = 17;
  function drawFrames(box, view, { frames, maxDepth }, flip, describe, open) {
    box.textContent = "";
    const height = Math.max((maxDepth + 1) * ROW, view.clientHeight);
    box.style.height = height + "px";
    for (const [n, x, depth, w] of frames) {
      const f = describe(n);
      const d = el("div", Object.assign({ class: "frame", title: f.title }, f.attrs));
      d.style.left = x + "px";
      d.style.top = (flip ? height - (depth + 1) * ROW : depth * ROW) + "px";
      d.style.width = w + "px";
      d.style.background = f.color;
      if (w > 30) d.textContent = f.name;
      if (f.mark) d.classList.add(f.mark);
      d.addEventListener("click", () => open(n));
      box.append(d);
    }
  }
  // A frame's mark for a search `q` (lower case) of names.
  const searchMark = (q, name) => (q ? (name.toLowerCase().includes(q) ? "match" : "dim") : null);

  // Flame graph of the samples, from the zoomed node.
  const flameView = $("flame-view");
  let flameDrawn = "";
  function flameGraph() {
    const width = flameView.clientWidth || 1200;
    flameDrawn = `${width}x${flameView.clientHeight}`;
    const tot = (n) => (n === 0 ? A.count : A.tot[n]);
    const q = state.flameSearch.toLowerCase();
    drawFrames($("flame"), flameView, layoutFrames(children, tot, state.zoom, width), state.flame, (n) => {
      const f = D.nodes.fn[n];
      const [name, dso] = D.functions[f];
      return { name, color: state.byChange ? changeColor(f) : fnColor[f], mark: searchMark(q, name),
        title: `${name} (${dso})\n${fmt(A.tot[n])} samples, ${pct(A.tot[n] / A.count)}`,
        attrs: { "data-node": String(n), "data-function": String(f) } };
    }, (n) => { state.zoom = n; flameGraph(); openFunction(D.nodes.fn[n]); });
  }
  // The box resized (by the user's drag, or the window's width): lay the
  // frames out again. Only when its size changed: the first call comes on
  // observing. Drawing does not resize the box (its height is set, its
  // scroll bar's room kept), so the observer is not called back.
  new ResizeObserver(() => {
    if (`${flameView.clientWidth}x${flameView.clientHeight}` !== flameDrawn) flameGraph();
  }).observe(flameView);

  // Off-CPU time, where the captures have it: a flame graph of the folded
  // off-CPU stacks, the process name first, each frame as wide as the
  // time threads waited under it.
  const OC = D.off_cpu;
  const ms = (ns) => (ns / 1e6).toFixed(3);
  const offCpu = OC ? offCpuTree() : null;
  function offCpuTree() {
    const name = [-1], tot = [0], kids = [[]];
    const at = new Map();
    for (const [frames, ns] of OC.stacks) {
      let n = 0;
      tot[0] += ns;
      for (const f of frames) {
        const key = n * OC.names.length + f;
        let c = at.get(key);
        if (c === undefined) {
          c = name.length;
          at.set(key, c);
          name.push(f);
          tot.push(0);
          kids.push([]);
          kids[n].push(c);
        }
        tot[c] += ns;
        n = c;
      }
    }
    return { name, tot, kids };
  }
  // Off-CPU frames in blues, as off-CPU flame graphs are drawn, a shade
  // per name so that neighbours differ.
  function offCpuColor(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return `hsl(${205 + (h % 30)}, 60%, ${62 + ((h >>> 8) % 18)}%)`;
  }
  const ocView = $("off-cpu-view");
  let ocZoom = 0, ocDrawn = "";
  function offCpuGraph() {
    const width = ocView.clientWidth || 1200;
    ocDrawn = `${width}x${ocView.clientHeight}`;
    const tot = (n) => offCpu.tot[n];
    const q = $("off-cpu-search").value.toLowerCase();
    drawFrames($("off-cpu-flame"), ocView, layoutFrames(offCpu.kids, tot, ocZoom, width), false, (n) => {
      const name = OC.names[offCpu.name[n]];
      return { name, color: offCpuColor(name), mark: searchMark(q, name),
        title: `${name}\n${ms(offCpu.tot[n])} ms off CPU, ${pct(offCpu.tot[n] / OC.total_ns)}`,
        attrs: { "data-node": String(n), "data-ns": String(offCpu.tot[n]) } };
    }, (n) => { ocZoom = n; offCpuGraph(); });
  }
  if (offCpu) {
    $("off-cpu-section").hidden = false;
    $("off-cpu-note").textContent =
      `${ms(OC.total_ns)} ms off CPU in all; a frame is as wide as the time threads waited under it`;
    $("off-cpu-search").addEventListener("input", offCpuGraph);
    $("off-cpu-reset").addEventListener("click", () => { ocZoom = 0; offCpuGraph(); });
    new ResizeObserver(() => {
      if (`${ocView.clientWidth}x${ocView.clientHeight}` !== ocDrawn) offCpuGraph();
    }).observe(ocView);
  }

  // Under the time line, the chosen thread's time per interval: on CPU,
  // waiting for a CPU, and waiting otherwise, from its off-CPU intervals
  // and the runs before them.
  const SPAN_KINDS = [["running", "#2e9e6b", "on CPU"], ["runnable", "#e8a33d", "waiting for a CPU"],
    ["waiting", "#8c96a8", "asleep, blocked or stopped"]];
  const spanKind = (name) => (name === "running" ? 0 : name === "runnable" ? 1 : 2);
  if (OC) {
    $("thread-legend").append(el("span", { class: "caption", text: "the thread's time per interval:" }),
      ...SPAN_KINDS.map(([key, color, label]) => chip({ "data-key": key }, color, label)));
  }
  // The chosen thread's time per interval and kind.
  function threadTime() {
    const per = new Map();
    if (!OC || state.thread === null) return per;
    const [pid, tid] = D.threads[state.thread];
    const sp = OC.spans;
    for (let i = 0; i < sp.tid.length; i++) {
      if (sp.tid[i] !== tid || (sp.pid[i] !== pid && sp.pid[i] !== -1)) continue;
      const b = sp.bucket[i];
      if (b >= D.buckets.count) continue;
      if (!per.has(b)) per.set(b, [0, 0, 0]);
      per.get(b)[spanKind(sp.states[sp.state[i]])] += sp.ns[i];
    }
    return per;
  }
  function threadSpans() {
    const box = $("thread-spans");
    box.textContent = "";
    const per = threadTime();
    $("thread-time").hidden = per.size === 0;
    const w = ($("timeline").clientWidth || 1200) / D.buckets.count;
    const bucketNs = D.buckets.width_ms * 1e6;
    for (const [b, ns] of per) {
      const when = (b * D.buckets.width_ms / 1000).toFixed(3);
      const col = el("div", { class: "col", "data-bucket": String(b), "data-ns": JSON.stringify(ns),
        title: `${when} s: ` + SPAN_KINDS.map(([, , label], k) => `${label} ${ms(ns[k])} ms`).join(", ") });
      col.style.left = b * w + "px";
      col.style.width = Math.max(1, w - 1) + "px";
      ns.forEach((v, k) => {
        const s = el("span", { "data-kind": SPAN_KINDS[k][0] });
        s.style.width = Math.min(100, v / bucketNs * 100) + "%";
        s.style.background = SPAN_KINDS[k][1];
        col.append(s);
      });
      box.append(col);
    }
  }

  // Time line: samples per interval, coloured by the interval's level-1
  // shares when there are top-down events; drag to select a range.
  let perBucket = new Float64Array(D.buckets.count);
  function countBuckets() {
    perBucket = new Float64Array(D.buckets.count);
    for (let i = 0; i < S.node.length; i++) {
      if (state.thread === null || S.thread[i] === state.thread) perBucket[S.bucket[i]] += S.count[i];
    }
  }
  countBuckets();
  const intervals = new Map();
  if (TD) for (const iv of TD.intervals) intervals.set(iv.bucket, iv);
  function timeline() {
    const box = $("timeline");
    box.querySelectorAll(".col").forEach((c) => c.remove());
    const width = box.clientWidth || 1200, height = 86;
    const max = Math.max(1, ...perBucket);
    const w = width / D.buckets.count;
    for (let b = 0; b < D.buckets.count; b++) {
      const h = perBucket[b] / max * height;
      const col = el("div", { class: "col", "data-bucket": String(b),
        title: `${(b * D.buckets.width_ms / 1000).toFixed(3)} s: ${fmt(perBucket[b])} samples` });
      col.style.left = b * w + "px";
      col.style.width = Math.max(1, w - 1) + "px";
      col.style.height = h + "px";
      // The intervals' shares are of every thread.
      const iv = state.thread === null ? intervals.get(b) : undefined;
      if (iv) {
        for (const n of level1) {
          const v = iv.values[TD.nodes.indexOf(n)];
          if (v === null) continue;
          const s = el("span", { "data-node": n.name });
          s.style.height = Math.max(0, v) * 100 + "%";
          s.style.background = n.color;
          col.append(s);
        }
      } else {
        col.append(el("span"));
        col.firstChild.style.height = "100%";
        col.firstChild.style.background = "#8aa4d6";
      }
      box.append(col);
    }
    drawSelection();
    threadSpans();
  }
  function drawSelection() {
    const sel = $("selection");
    const box = $("timeline");
    if (!state.range) { sel.hidden = true; $("range").textContent = "whole capture"; rangeTopdown(); return; }
    const w = (box.clientWidth || 1200) / D.buckets.count;
    sel.hidden = false;
    sel.style.left = state.range[0] * w + "px";
    sel.style.width = (state.range[1] - state.range[0] + 1) * w + "px";
    const s = D.buckets.width_ms / 1000;
    $("range").textContent =
      `${(state.range[0] * s).toFixed(3)} s to ${((state.range[1] + 1) * s).toFixed(3)} s`;
    rangeTopdown();
  }
  // The level-1 shares of the selected range: its intervals' slots of each
  // node over their slots (one interval: perfq topdown --by interval's row).
  function rangeTopdown() {
    const box = $("range-topdown");
    box.textContent = "";
    if (!TD) return;
    if (state.thread !== null) {
      box.textContent = "top-down shares per interval are of every thread: choose all threads to see them";
      return;
    }
    const [b0, b1] = state.range || [-Infinity, Infinity];
    let slots = 0;
    const nodeSlots = new Float64Array(TD.nodes.length);
    for (const iv of TD.intervals) {
      if (iv.bucket < b0 || iv.bucket > b1 || iv.slots === null) continue;
      slots += iv.slots;
      iv.node_slots.forEach((v, i) => { nodeSlots[i] += v || 0; });
    }
    for (const n of level1) {
      const v = slots ? nodeSlots[TD.nodes.indexOf(n)] / slots : null;
      box.append(el("span", { "data-node": n.name },
        el("i", { style: `background:${n.color}` }), `${nodeLabel(n)}: `,
        el("b", { text: v === null ? "–" : pct(v) })));
    }
  }
  function select(b0, b1) {
    state.range = b0 === null ? null : [Math.min(b0, b1), Math.max(b0, b1)];
    A = aggregate();
    state.zoom = 0;
    drawSelection();
    redraw();
  }
  (function dragging() {
    const box = $("timeline");
    let start = null;
    const bucketAt = (ev) => {
      const r = box.getBoundingClientRect();
      const b = Math.floor((ev.clientX - r.left) / r.width * D.buckets.count);
      return Math.max(0, Math.min(D.buckets.count - 1, b));
    };
    box.addEventListener("mousedown", (ev) => { start = bucketAt(ev); });
    box.addEventListener("mousemove", (ev) => {
      if (start === null) return;
      state.range = [Math.min(start, bucketAt(ev)), Math.max(start, bucketAt(ev))];
      drawSelection();
    });
    window.addEventListener("mouseup", (ev) => {
      if (start === null) return;
      const end = bucketAt(ev);
      start === end && state.range === null ? select(null) : select(start, end);
      start = null;
    });
    box.addEventListener("dblclick", () => select(null));
  })();

  function redraw() {
    functionsTable();
    flameGraph();
    if (state.selected !== null) openFunction(state.selected);
  }

  // Controls.
  $("search").addEventListener("input", (e) => { state.search = e.target.value; functionsTable(); });
  $("flame-search").addEventListener("input", (e) => { state.flameSearch = e.target.value; flameGraph(); });
  $("flame-reset").addEventListener("click", () => { state.zoom = 0; flameGraph(); });
  $("flame-flip").addEventListener("click", () => {
    state.flame = !state.flame;
    flameGraph();
    // The roots in sight: at the bottom of a flame that is deeper than its box.
    flameView.scrollTop = state.flame ? flameView.scrollHeight : 0;
  });
  $("range-clear").addEventListener("click", () => select(null));
  // Threads, most samples first.
  const threadSamples = new Float64Array(D.threads.length);
  for (let i = 0; i < S.thread.length; i++) threadSamples[S.thread[i]] += S.count[i];
  const threadOrder = D.threads.map((_, i) => i).sort((a, b) => threadSamples[b] - threadSamples[a] || a - b);
  for (const t of threadOrder) {
    if (!threadSamples[t]) continue;
    const [pid, tid, comm] = D.threads[t];
    $("thread").append(el("option", { value: String(t),
      text: `${comm} ${pid}/${tid} (${fmt(threadSamples[t])})` }));
  }
  $("thread").addEventListener("change", (e) => {
    state.thread = e.target.value === "" ? null : Number(e.target.value);
    countBuckets();
    A = aggregate();
    state.zoom = 0;
    timeline();
    redraw();
  });
  if (DF) {
    $("flame-diff").hidden = false;
    $("flame-diff").addEventListener("click", () => {
      state.byChange = !state.byChange;
      $("flame-diff").classList.toggle("on", state.byChange);
      flameLegend();
      flameGraph();
    });
  }
  for (const b of document.querySelectorAll(".tabs button")) {
    b.addEventListener("click", () => {
      state.mode = b.dataset.mode;
      state.sort = null;
      document.querySelectorAll(".tabs button").forEach((x) => x.classList.toggle("on", x === b));
      functionsLegend();
      functionsTable();
    });
  }
  const l2 = $("level2");
  if (l2) l2.addEventListener("change", () => { state.level2 = l2.checked; functionsTable(); });
  for (const th of document.querySelectorAll("#functions th[data-sort]")) {
    th.addEventListener("click", () => {
      const k = th.dataset.sort;
      state.asc = state.sort === k ? !state.asc : false;
      state.sort = k;
      document.querySelectorAll("#functions th").forEach((x) => x.classList.remove("sorted", "asc"));
      th.classList.add("sorted");
      if (state.asc) th.classList.add("asc");
      functionsTable();
    });
  }
  // The flame graph follows its box's size (the ResizeObserver above).
  window.addEventListener("resize", timeline);

  header();
  functionsLegend();
  flameLegend();
  diffTable();
  timeline();
  redraw();
  if (offCpu) offCpuGraph();
  // For scripts driving the page (the tests): the same as the mouse does.
  // performance.now() once drawn: the page's time to open
  // (benches/html.sh).
  window.perfqReport = { select, openFunction, state: () => state, readyMs: performance.now() };
})();
