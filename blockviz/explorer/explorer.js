/* blockviz token-flow explorer: every calculation of one pre-norm block for one token.
   Vanilla JavaScript, no network, no build step. The DOM is built with textContent only;
   the data (the record, the style module's colours and number format) is the JSON block
   #record-data, written by blockviz.explorer. */
(function () {
  "use strict";

  /* A large record's numbers come packed (blockviz.explorer.packing.packed): each tensor's bytes regrouped by
     place, raw-deflated, base85 (RFC 1924's alphabet, four characters swapped: packing.JSON_SAFE). They are
     unpacked first (DecompressionStream), then the page is built. */
  const PAGE_DATA = JSON.parse(document.getElementById("record-data").textContent);
  const PACKED = [];
  (function find(node) {
    if (!node || typeof node !== "object") return;
    if (typeof node.z === "string") { PACKED.push(node); return; }
    Object.keys(node).forEach(function (key) { find(node[key]); });
  })(PAGE_DATA);
  const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%,()*+-;.=:?@^_'{|}~";
  const DIGIT = new Uint8Array(128);
  for (let k = 0; k < BASE85.length; k++) DIGIT[BASE85.charCodeAt(k)] = k;
  function fromBase85(text) { // 5 characters → 4 bytes, big-endian; a last group of m characters → m − 1 bytes
    const rest = text.length % 5, bytes = new Uint8Array(Math.floor(text.length / 5) * 4 + (rest ? rest - 1 : 0));
    let o = 0;
    for (let g = 0; g < text.length; g += 5) {
      let v = 0;
      for (let k = g; k < g + 5; k++) v = v * 85 + (k < text.length ? DIGIT[text.charCodeAt(k)] : 84);
      for (let b = 3; b >= 0 && o < bytes.length; b--) bytes[o++] = Math.floor(v / Math.pow(256, b)) % 256;
    }
    return bytes;
  }
  function unpack(t) {
    const stream = new Blob([fromBase85(t.z)]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return new Response(stream).arrayBuffer().then(function (buffer) {
      const planes = new Uint8Array(buffer), size = t.size, count = planes.length / size;
      const out = new Uint8Array(planes.length);
      for (let b = 0; b < size; b++) for (let k = 0; k < count; k++) out[k * size + b] = planes[b * count + k];
      t.bytes = out;
      delete t.z;
    });
  }
  function start() {
    if (!PAGE_DATA.workbench) { main(PAGE_DATA); return; }
    const model = toyModel(PAGE_DATA);
    window.blockviz.run = model.run;
    workbench(PAGE_DATA, model);
  }
  let listening = null; // main's listeners on the document and window, dropped when the workbench draws the page again
  if (!PACKED.length) start();
  else Promise.all(PACKED.map(unpack)).then(start, function (error) {
    document.getElementById("app").textContent = "This browser cannot unpack the page's numbers (it needs DecompressionStream): " + error;
  });

  /* A tensor is {shape, data: [numbers, null for −∞]} (short text) or {shape, b64} (a large
     record: its little-endian float32 or float64 bytes, exact). */
  function decodeTensor(t, F32) {
    if (t.bytes !== undefined) { // unpacked: little-endian float32 or float64 bytes
      const view = new DataView(t.bytes.buffer), size = F32 ? 4 : 8, data = new Float64Array(t.bytes.length / size);
      for (let k = 0; k < data.length; k++) data[k] = F32 ? view.getFloat32(k * size, true) : view.getFloat64(k * size, true);
      return data;
    }
    if (t.b64 === undefined) {
      const data = new Float64Array(t.data.length);
      for (let k = 0; k < t.data.length; k++) {
        const v = t.data[k];
        data[k] = v === null ? -Infinity : (F32 ? Math.fround(v) : v);
      }
      return data;
    }
    const text = atob(t.b64), bytes = new Uint8Array(text.length);
    for (let k = 0; k < text.length; k++) bytes[k] = text.charCodeAt(k);
    const view = new DataView(bytes.buffer), size = F32 ? 4 : 8, data = new Float64Array(bytes.length / size);
    for (let k = 0; k < data.length; k++) data[k] = F32 ? view.getFloat32(k * size, true) : view.getFloat64(k * size, true);
    return data;
  }

  /* The trained toy model of a workbench page (DATA.workbench): its parameters as the page carries them and
     its whole forward pass (forward.js) for any sentence and edits. compute(sentence, edits, maskOff) →
     {tokens, ids, unknown, T: every record field, P: the parameters used}; run(sentence, edits, options)
     the same as plain data, the record's JSON: {field: nested lists, −∞ as null, …, tokens, unknown}.
     Both throw an Error with the CLI's message for a sentence it refuses (empty, past the positions,
     no known word) and for an edit that is not a parameter's cell and a finite number. */
  function toyModel(DATA) {
    const M = window.blockviz.math, F32 = DATA.config.dtype === "float32", params = {};
    Object.keys(DATA.params).forEach(function (name) { params[name] = { shape: DATA.params[name].shape, data: decodeTensor(DATA.params[name], F32), offset: 0 }; });
    const vocabulary = DATA.source.vocabulary, limit = DATA.workbench.max_tokens, blocks = DATA.workbench.n_blocks || 1;
    /* views: every block's fields (forward.js forwardStack; one view for one block); T: the last block's. */
    function compute(sentence, edits, maskOff) {
      const told = M.toyTokens(String(sentence), vocabulary, limit);
      if (told.error) throw new Error(told.error);
      const P = M.edited(params, edits, F32 ? Math.fround : null);
      const views = M.forwardStack(told.ids, P, DATA.config, blocks, maskOff).map(function (T, k) { return finite(T, blocks > 1 ? "block " + k + "'s " : ""); });
      return { tokens: told.tokens, ids: told.ids, unknown: told.unknown, views: views, T: views[blocks - 1], P: P };
    }
    /* Every field finite (−∞ only where a key is blocked), as the record's check demands (blockviz.record_check):
       parameters that make a value overflow are refused, never drawn as NaN. */
    function finite(T, where) {
      Object.keys(DATA.fields).forEach(function (name) {
        const data = T[name].data, blockable = name === "mask" || name === "masked_scores";
        for (let k = 0; k < data.length; k++) {
          if (!Number.isFinite(data[k]) && !(blockable && data[k] === -Infinity)) {
            throw new Error(where + "field '" + name + "' holds " + (blockable ? "NaN or +\u221e" : "NaN or \u00b1\u221e") + ": a value overflowed or the record was edited; every value must be a finite number"); // blockviz.record_check's words
          }
        }
      });
      return T;
    }
    /* The record's JSON layout: one block's fields; a stack's fields it holds once (the embeddings, the model's
       prediction) and "blocks": [each block's own fields, with its logit lens before the last]. */
    function run(sentence, edits, options) {
      const got = compute(sentence, edits, !!(options && options.maskOff)), out = { tokens: got.tokens, unknown: got.unknown };
      if (blocks === 1) { Object.keys(got.T).forEach(function (name) { out[name] = M.nested(got.T[name]); }); return out; }
      const once = DATA.workbench.stack_fields, prediction = DATA.workbench.prediction_fields;
      once.concat(prediction).forEach(function (name) { out[name] = M.nested(got.T[name]); });
      out.blocks = got.views.map(function (T, k) {
        const own = {};
        Object.keys(T).forEach(function (name) {
          if (once.indexOf(name) < 0 && !(k === blocks - 1 && prediction.indexOf(name) >= 0)) own[name] = M.nested(T[name]);
        });
        return own;
      });
      return out;
    }
    return { params: params, vocabulary: vocabulary, limit: limit, blocks: blocks, compute: compute, run: run };
  }

  /* ---------- the workbench: a trained toy model's page runs the model itself ---------- */

  function node(tag, attrs) { // the DOM by textContent only, as main's el()
    const out = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      const value = attrs[key];
      if (value === undefined || value === null || value === false) return;
      if (key === "text") out.textContent = value; else if (key === "class") out.className = value; else out.setAttribute(key, value === true ? "" : String(value));
    });
    for (let a = 2; a < arguments.length; a++) if (arguments[a]) out.appendChild(arguments[a]);
    return out;
  }
  function cellName(name, index) { return name + "[" + index.join(", ") + "]"; }
  function editsCount(edits) { return Object.keys(edits).reduce(function (a, name) { return a + edits[name].length; }, 0); }

  /* The controls above the page (kept while it is drawn again): the sentence (completion from the
     vocabulary), mask off, the edits made (each with its reset), reset all, download the parameters.
     Every change computes the whole forward pass (forward.js) and draws the page from its numbers;
     the link keeps the sentence, the edits and the mask with the view. */
  function workbench(DATA, model) {
    const stacked = model.blocks > 1, M = window.blockviz.math;
    const bench = { sentence: DATA.sentence, edits: {}, maskOff: false, view: null, block: DATA.workbench.block || 0 };
    readBenchHash(bench, model.blocks);
    const vocabulary = model.vocabulary.slice(1);
    const words = node("datalist", { id: "wb-words" });
    const input = node("input", { type: "text", id: "wb-sentence", list: "wb-words", autocomplete: "off", spellcheck: "false", value: bench.sentence, "aria-describedby": "wb-note" });
    const mask = node("input", { type: "checkbox", id: "wb-mask" });
    mask.checked = bench.maskOff;
    const resetAll = node("button", { type: "button", id: "wb-reset-all", text: "reset all edits" });
    const download = node("button", { type: "button", id: "wb-download", text: "download these parameters" });
    const note = node("p", { id: "wb-note", class: "note", "aria-live": "polite" });
    const editList = node("ul", { class: "wb-edits", "aria-label": "Edited parameters" });
    /* A stack's block selector: the steps, the pattern and the Parameters table show this block. */
    const blockBar = stacked ? node("div", { class: "bar blocks", role: "radiogroup", "aria-label": "Block" }, node("span", { class: "label", text: "Block" })) : null;
    const blockButtons = stacked ? Array.from({ length: model.blocks }, function (_, k) {
      const button = node("button", { type: "button", class: "head", role: "radio", "data-block": k, text: "block " + k });
      button.addEventListener("click", function () { chooseBlock(k, null, false); });
      button.addEventListener("keydown", function (event) {
        const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 };
        if (!(event.key in moves)) return;
        event.preventDefault();
        chooseBlock((bench.block + moves[event.key] + model.blocks) % model.blocks, null, true);
      });
      blockBar.appendChild(button);
      return button;
    }) : [];
    function chooseBlock(k, head, focus) {
      bench.block = k;
      if (head !== null && bench.view) bench.view.head = head;
      draw();
      if (focus) blockButtons[k].focus();
    }
    function markBlocks() {
      blockButtons.forEach(function (button, k) { button.setAttribute("aria-checked", String(k === bench.block)); button.tabIndex = k === bench.block ? 0 : -1; });
    }
    const panel = node("section", { class: "workbench", "aria-label": "Workbench" },
      node("p", { class: "wb-row" }, node("label", { for: "wb-sentence", text: "Sentence", class: "label" }), input, words,
        node("label", { for: "wb-mask", class: "wb-mask" }, mask, node("span", { text: " mask off (every token sees every token)" })), resetAll, download),
      node("p", { class: "note", text: "The page runs the toy model itself (its " + Object.keys(model.params).length + " parameter tables are in it): type a sentence of its " + vocabulary.length +
        " words (others are read as " + DATA.workbench.unknown + "), or click a number of γ, β, a bias or the Parameters table below to type a new value (or drag it sideways, or focus it and press Alt+\u2191 / Alt+\u2193: every number follows); every step is computed again." +
        (stacked ? " It has " + model.blocks + " blocks: the residual stream leaving one is the input of the next; choose the block whose steps are shown." : "") }),
      blockBar, note, editList);
    const app = document.getElementById("app");
    app.parentNode.insertBefore(panel, app);

    function complete() { // the vocabulary's words that finish the word being typed, as whole sentences
      const text = input.value, cut = text.search(/[\p{L}\p{N}_']*$/u), stem = text.slice(cut).toLowerCase();
      words.textContent = "";
      if (!stem) return;
      vocabulary.filter(function (w) { return w.indexOf(stem) === 0 && w !== stem; }).slice(0, 12).forEach(function (w) {
        words.appendChild(node("option", { value: text.slice(0, cut) + w }));
      });
    }
    function listEdits() {
      editList.textContent = "";
      Object.keys(bench.edits).forEach(function (name) {
        bench.edits[name].forEach(function (edit) {
          const index = edit.slice(0, -1), trained = model.params[name].data[index.reduce(function (f, k, d) { return f * model.params[name].shape[d] + k; }, 0)];
          const reset = node("button", { type: "button", class: "copy", text: "reset", "aria-label": "reset " + cellName(name, index) });
          reset.addEventListener("click", function () { // the focus moves on to the next reset, or the sentence when none is left
            setEdit(name, index, null);
            draw();
            (editList.querySelector("button") || input).focus();
          });
          editList.appendChild(node("li", null, node("span", { text: cellName(name, index) + " = " + edit[edit.length - 1] + " (trained " + parseFloat(trained.toPrecision(7)) + ") " }), reset));
        });
      });
      resetAll.disabled = editsCount(bench.edits) === 0;
    }
    function setEdit(name, index, value) {
      const list = (bench.edits[name] || []).filter(function (e) { return e.slice(0, -1).join() !== index.join(); });
      if (value !== null) list.push(index.concat([value]));
      if (list.length) bench.edits[name] = list; else delete bench.edits[name];
    }
    /* Draw the page for the bench's sentence, edits and mask; a sentence the model refuses leaves the page as it was. */
    function draw(focusSelector) {
      let got;
      try { got = model.compute(bench.sentence, bench.edits, bench.maskOff); }
      catch (error) { note.textContent = error.message + " — nothing recomputed."; input.setAttribute("aria-invalid", "true"); return false; }
      input.removeAttribute("aria-invalid");
      const edited = editsCount(bench.edits) > 0, base = edited ? model.compute(bench.sentence, {}, bench.maskOff) : null;
      note.textContent = got.unknown.length ? got.unknown.map(function (w) { return "\u201c" + w + "\u201d"; }).join(", ") + (got.unknown.length === 1 ? " is" : " are") +
        " not in the toy model's vocabulary: read as " + DATA.workbench.unknown + " (marked with a dotted border)." : "";
      const data = liveData(got, base, false);
      main(data);
      showSentence(bench.sentence, got.tokens.length);
      bench.view = data.live.state;
      listEdits();
      markBlocks();
      if (focusSelector) { // the cell edited, where it is shown (a step's table, or the Parameters table)
        const target = Array.prototype.filter.call(document.querySelectorAll(focusSelector), function (t) { return t.offsetParent !== null; })[0];
        if (target) target.focus();
      }
      return true;
    }
    /* The header and the window's title name the sentence shown (blockviz.explorer.summary.summary_opening). */
    function showSentence(sentence, n) {
      document.getElementById("summary").textContent = "blockviz explorer \u2014 \u201c" + sentence + "\u201d: " + n + " token" + (n !== 1 ? "s" : "") + ", " + DATA.workbench.summary_details;
      document.title = "blockviz explorer \u2014 " + sentence;
    }
    /* The page's data for main: the computed numbers got (and base, the trained parameters', when edited) of the shown block. */
    function liveData(got, base, quick) {
      const edited = editsCount(bench.edits) > 0, k = bench.block;
      // the record's own numbers (torch's), not the page's; a stack's page draws its own, the record holds one block
      const recorded = !stacked && !edited && !bench.maskOff && bench.sentence === DATA.sentence;
      const view = bench.view || DATA.initial, n = got.tokens.length;
      return Object.assign({}, DATA, {
        sentence: bench.sentence, tokens: got.tokens, special: got.tokens.map(function () { return false; }),
        initial: { token: Math.min(view.token, n - 1), head: view.head, step: view.step, theme: view.theme },
        live: { T: recorded ? null : got.views[k], P: stacked ? M.blockParams(got.P, k) : got.P, base: edited ? base.views[k] : null, ids: got.ids,
                edits: stacked ? blockEdits(k) : bench.edits, firstDraw: bench.view === null, trained: stacked ? M.blockParams(model.params, k) : model.params, state: bench.view,
                hash: benchHash, edit: stacked ? function (name, index, value) { edit(fullName(name, k), index, value, name); } : edit,
                stack: stacked ? { views: got.views, block: k, choose: chooseBlock } : null, quick: quick,
                drag: stacked ? function (name, index, value, done) { drag(fullName(name, k), index, value, done, name); } : drag },
      });
    }
    /* A drag: each move recomputes and writes the numbers in view into the page shown (main's quick redraw, the
       trained numbers computed once per drag); the end draws the whole page. A value that makes a number overflow
       is not taken: the page keeps the last one that did not, and says why. */
    let trainedRun = null;
    function drag(name, index, value, done, shownName) {
      const before = JSON.stringify(bench.edits);
      setEdit(name, index, value);
      if (done) { trainedRun = null; edit(name, index, value, shownName); return; }
      let got;
      try { got = model.compute(bench.sentence, bench.edits, bench.maskOff); }
      catch (error) { bench.edits = JSON.parse(before); note.textContent = cellName(name, index) + " = " + value + " refused: " + error.message; return; }
      const key = bench.sentence + "\n" + bench.maskOff;
      if (!trainedRun || trainedRun.key !== key) trainedRun = { key: key, got: model.compute(bench.sentence, {}, bench.maskOff) };
      const data = liveData(got, trainedRun.got, true);
      data.live.dragged = { param: shownName || name, at: index };
      main(data);
    }
    /* A typed value: kept, or refused with the reason when it makes a value overflow (the page then stays as it was). */
    function edit(name, index, value, shownName) {
      const before = JSON.stringify(bench.edits), cell = '[data-param="' + (shownName || name) + '"][data-at="' + index.join(",") + '"]';
      setEdit(name, index, value);
      if (draw(cell)) return;
      const why = note.textContent;
      bench.edits = JSON.parse(before);
      draw(cell);
      note.textContent = cellName(name, index) + " = " + value + " refused: " + why;
    }
    function benchHash() {
      return "&sentence=" + encodeURIComponent(bench.sentence) + (editsCount(bench.edits) ? "&edits=" + encodeURIComponent(JSON.stringify(bench.edits)) : "") + (bench.maskOff ? "&mask=off" : "") +
        (stacked ? "&block=" + bench.block : "");
    }
    /* A stack's parameter names: block k's own are "blocks.k.attn.W_Q" …, the embeddings, ln_f and W_U have one. */
    function fullName(name, k) { return name in model.params ? name : "blocks." + k + "." + name; }
    function blockEdits(k) { // the edits of block k's parameters (and the shared ones), by the names its page shows
      const out = {}, own = "blocks." + k + ".";
      Object.keys(bench.edits).forEach(function (name) {
        if (name.indexOf(own) === 0) out[name.slice(own.length)] = bench.edits[name];
        else if (name.indexOf("blocks.") !== 0) out[name] = bench.edits[name];
      });
      return out;
    }
    let pending = 0;
    input.addEventListener("input", function () {
      complete();
      bench.sentence = input.value;
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(function () { draw(); });
    });
    mask.addEventListener("change", function () { bench.maskOff = mask.checked; draw(); });
    resetAll.addEventListener("click", function () { bench.edits = {}; draw(); });
    download.addEventListener("click", function () {
      const P = model.compute(bench.sentence.trim() ? bench.sentence : DATA.sentence, bench.edits, false).P, out = {};
      Object.keys(P).forEach(function (name) { out[name] = window.blockviz.math.nested(P[name]); });
      const link = node("a", { download: "parameters.json" });
      link.href = URL.createObjectURL(new Blob([JSON.stringify(out)], { type: "application/json" }));
      document.body.appendChild(link);
      link.click();
      link.remove();
      note.textContent = stacked ? "Saved parameters.json (every table of the " + model.blocks + " blocks, named as in the model's file: blocks.K.\u2026): blockviz record \u2026 --model " + DATA.source.model + " --params parameters.json computes these numbers." :
        "Saved parameters.json: blockviz record \u2026 --model toy --params parameters.json computes these numbers.";
    });
    window.addEventListener("hashchange", function () {
      const before = [bench.sentence, JSON.stringify(bench.edits), bench.maskOff, bench.block].join("\n");
      readBenchHash(bench, model.blocks);
      if ([bench.sentence, JSON.stringify(bench.edits), bench.maskOff, bench.block].join("\n") === before) return;
      input.value = bench.sentence; mask.checked = bench.maskOff;
      draw();
    });
    if (!draw()) { bench.sentence = DATA.sentence; bench.edits = {}; input.value = bench.sentence; draw(); }
  }
  /* sentence=, edits= (JSON: {name: [[index…, value]]}) and mask=off of the link; anything malformed is ignored. */
  function readBenchHash(bench, blocks) {
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      const eq = part.indexOf("=");
      if (eq < 0) return;
      let key, value;
      try { key = decodeURIComponent(part.slice(0, eq)); value = decodeURIComponent(part.slice(eq + 1)); } catch (error) { return; }
      if (key === "sentence") bench.sentence = value;
      else if (key === "mask") bench.maskOff = value === "off";
      else if (key === "block" && /^\d+$/.test(value) && parseInt(value, 10) < blocks) bench.block = parseInt(value, 10);
      else if (key === "edits") {
        try {
          const edits = JSON.parse(value);
          if (edits && typeof edits === "object" && !Array.isArray(edits)) bench.edits = edits;
        } catch (error) { /* not JSON: no edits */ }
      }
    });
  }

  function main(DATA) {
  const LIVE = DATA.live || null; // the workbench's numbers: its forward pass of the typed sentence with the edited parameters
  /* A drag of a parameter (LIVE.quick): the page shown keeps its nodes and listeners; only the numbers in view (the
     pattern, the current step, the stack, the Parameters table) are built again and written into them (morph). */
  const QUICK = !!(LIVE && LIVE.quick);
  if (!QUICK) {
    if (listening) listening.abort();
    listening = new AbortController();
  }
  function on(target, type, handler) { if (!QUICK) target.addEventListener(type, handler, { signal: listening.signal }); }
  const S = DATA.style;
  const C = DATA.config;
  const TOKENS = DATA.tokens;
  const N = TOKENS.length, H = C.n_heads, D = C.d_model, E = C.d_head, F = C.d_ff;
  const F32 = C.dtype === "float32";
  const TOLERANCE = F32 ? 1e-4 : 1e-9; // relative to 1 + |record value|
  const STEP_NAMES = DATA.steps.map(function (s) { return s.name; });
  const OVERVIEW = "overview"; // the page's first view: every layer's and head's weights row of the token
  const VIEW_NAMES = [OVERVIEW].concat(STEP_NAMES);
  const MINUS = S.minus;

  /* ---------- tensors ---------- */

  function decode(t) { return decodeTensor(t, F32); }
  function load(t) { return { shape: t.shape, data: decode(t), offset: 0 }; }
  function loadFloat32(t) { // the overview's weights: always float32 (unpacked: little-endian bytes)
    const bytes = t.bytes;
    const view = new DataView(bytes.buffer), data = new Float64Array(bytes.length / 4);
    for (let k = 0; k < data.length; k++) data[k] = view.getFloat32(k * 4, true);
    return { shape: t.shape, data: data, offset: 0 };
  }
  const T = {}, P = {}, CUT = {};
  if (LIVE) Object.assign(P, LIVE.P);
  if (LIVE && LIVE.T) Object.assign(T, LIVE.T);
  else Object.keys(DATA.tensors).forEach(function (name) { // "same": equal to an earlier one; "derived": computed from earlier ones
    const t = DATA.tensors[name];
    T[name] = t.same ? T[t.same] : t.derived ? derive(t.shape, t.derived) : load(t);
  });
  /* blockviz.explorer.derived: float64 arithmetic rounded once to the record's dtype, bit for bit the
     recorded numbers (the page is written only with derivations that give them). */
  function derive(shape, how) {
    const a = T[how.of[0]], b = how.of.length > 1 ? T[how.of[1]] : null, round = F32 ? Math.fround : function (v) { return v; };
    const out = new Float64Array(a.data.length), last = a.shape[a.shape.length - 1];
    if (how.op === "add") for (let k = 0; k < out.length; k++) out[k] = round(a.data[k] + b.data[k % b.data.length]);
    else if (how.op === "centre") for (let k = 0; k < out.length; k++) out[k] = round(a.data[k] - b.data[Math.floor(k / last)]);
    else if (how.op === "divide") { const root = round(Math.sqrt(E)); for (let k = 0; k < out.length; k++) out[k] = round(a.data[k] / root); }
    else if (how.op === "concat") {
      const heads = a.shape[0], n = a.shape[1], d = a.shape[2];
      for (let h = 0; h < heads; h++) for (let t = 0; t < n; t++) for (let j = 0; j < d; j++) out[t * heads * d + h * d + j] = a.data[(h * n + t) * d + j];
    }
    return { shape: shape, data: out, offset: 0 };
  }
  if (!LIVE) Object.keys(DATA.params).forEach(function (name) {
    const p = DATA.params[name];
    if (p.parts) CUT[name] = { shape: p.shape, columns: p.columns, parts: p.parts.map(load) }; // only the columns behind the shown ones
    else P[name] = load(p);
  });
  const KV = C.kv_heads || H, GROUP = H / KV;
  function kvHead(h) { return Math.floor(h / GROUP); }

  /* A weight matrix of (one head of) parameter name: {rows, cols: the columns carried, width: all columns, at(r, k)} */
  function weight(name, head) {
    if (CUT[name]) {
      const c = CUT[name], g = c.shape.length === 3 ? head : 0, part = c.parts[g], cols = c.columns[g];
      return { rows: part.shape[0], cols: cols, width: c.shape[c.shape.length - 1], cut: true, get: function (r, k) { return part.data[r * cols.length + k]; } };
    }
    const W = P[name].shape.length === 3 ? sub(P[name], head) : P[name], width = W.shape[1];
    return { rows: W.shape[0], cols: range(width), width: width, cut: false, get: function (r, k) { return W.data[W.offset + r * width + k]; } };
  }
  /* x · W (+ b) on the carried columns: {values (full width, null where not carried), scale (Σ |terms|, for the check), product} */
  function linear(x, W, bias) {
    const product = new Array(W.width).fill(null), values = new Array(W.width).fill(null), scale = new Array(W.width).fill(null);
    W.cols.forEach(function (c, k) {
      let sum = 0, size = 0;
      for (let r = 0; r < x.length; r++) { const t = x[r] * W.get(r, k); sum += t; size += Math.abs(t); }
      product[c] = sum;
      values[c] = bias ? sum + bias[c] : sum;
      scale[c] = 1 + size + (bias ? Math.abs(bias[c]) : 0);
    });
    return { product: product, values: values, scale: scale };
  }
  function colOf(W, c) { return W.cols.indexOf(c); }
  function carried(values, W) { return W.cols.map(function (c) { return values[c]; }); } // the carried columns only

  function sub(t) { // t[i][j]… : a view on the remaining dimensions
    let offset = t.offset, shape = t.shape;
    for (let a = 1; a < arguments.length; a++) {
      const size = shape.slice(1).reduce(function (x, y) { return x * y; }, 1);
      offset += arguments[a] * size;
      shape = shape.slice(1);
    }
    return { shape: shape, data: t.data, offset: offset };
  }
  function vec(t) { // a 1-D view as a plain array
    const view = sub.apply(null, arguments);
    return Array.from(view.data.subarray(view.offset, view.offset + view.shape[0]));
  }
  function at(t) { return sub.apply(null, arguments).data[sub.apply(null, arguments).offset]; }
  function add(a, b) { return a.map(function (v, k) { return v + b[k]; }); }
  function range(n) { return Array.from({ length: n }, function (_, k) { return k; }); }
  function maxAbs(values) { return values.reduce(function (m, v) { return Number.isFinite(v) ? Math.max(m, Math.abs(v)) : m; }, 1e-9); }

  const MATH = window.blockviz.math; // forward.js: the arithmetic shared with the page's forward pass
  const ACTIVATIONS = MATH.ACTIVATIONS;
  const ACTIVATE = ACTIVATIONS[C.activation];

  /* ---------- the style module's number format (blockviz.style.format_number) ---------- */

  function fmt(x) {
    if (x === -Infinity) return MINUS + "\u221e";
    if (x === Infinity) return "\u221e";
    if (Number.isNaN(x)) return "NaN";
    const d = S.decimals;
    let text = x.toFixed(d);
    const scaled = Math.abs(x) * Math.pow(10, d);
    if (scaled % 1 === 0.5 && Math.floor(scaled) % 2 === 0) { // Python rounds an exact tie to even
      text = (x < 0 ? "-" : "") + (Math.floor(scaled) / Math.pow(10, d)).toFixed(d);
    }
    if (text.charAt(0) === "-") text = parseFloat(text) === 0 ? text.slice(1) : MINUS + text.slice(1);
    return text;
  }
  function ascii(text) { // CSV's form of a shown text: ASCII minus, −∞ as -inf (format_number(…, unicode_minus=False))
    return text.replace(new RegExp(MINUS + "\u221e", "g"), "-inf").replace(new RegExp(MINUS, "g"), "-");
  }
  /* "=" or "≈" between shown numbers (the videos' rule, blockviz.scenes.block_helpers.products_hold):
     "=" when the result computed from the operands as shown, rounded as shown, is the shown result. */
  function sv(x) { return Number.isFinite(x) ? parseFloat(ascii(fmt(x))) : x; } // a number as it is shown
  function eq(fromShown, result) { return fmt(fromShown) === fmt(result) ? " = " : " \u2248 "; }
  function fmtDelta(x) {
    if (x === 0) return "0";
    if (!Number.isFinite(x)) return "\u221e";
    return x.toExponential(1).replace("e-", "e" + MINUS).replace("e+", "e");
  }

  /* ---------- DOM (textContent only) ---------- */

  function el(tag, props) {
    const node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        const value = props[key];
        if (value === undefined || value === null || value === false) return;
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    for (let a = 2; a < arguments.length; a++) {
      const child = arguments[a];
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) child.forEach(function (c) { if (c) node.appendChild(c); });
      else node.appendChild(child);
    }
    return node;
  }
  function textEl(tag, text, cls) { return el(tag, { text: text, class: cls }); }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key]; else node.setAttribute(key, String(attrs[key]));
    });
    return node;
  }

  /* ---------- colours: the style module's maps, nearest stop ---------- */

  /* Every number is coloured on the one scale of its quantity's family (blockviz.record_fields;
     BlockRecord.scale_limit, the scale of the figures and scenes): a field's own family, a parameter
     its own (DATA.param_families: the norms' γ and β theirs, every other parameter the parameters'), a derived number (a term, a product) the family of what it adds up to.
     A softmax's Σ row (row.sums) is left uncoloured: a sum is not the quantity of its column. */
  function signedStop(value, limit) {
    const t = Math.min(1, Math.max(0, (value + limit) / (2 * limit)));
    return S.signed[Math.round(t * (S.signed.length - 1))];
  }
  function weightStop(value) {
    const t = Math.min(1, Math.max(0, value));
    return S.weights[Math.round(t * (S.weights.length - 1))];
  }
  function familyOf(field) { return DATA.fields[field].scale; }
  function paint(cell, value, family, blocked) {
    if (blocked || value === -Infinity) { cell.classList.add("blockedcell"); return; }
    if (!(family in DATA.families)) throw new Error("no colour scale for the family " + family);
    cell.setAttribute("data-family", family);
    if (!Number.isFinite(value)) return;
    const stop = family === S.weights_family ? weightStop(value) : signedStop(value, DATA.families[family]);
    cell.style.setProperty("background-color", stop[0]);
    cell.style.setProperty("color", stop[1]);
    if (family in CLIPPED && Math.abs(value) > DATA.families[family]) {
      cell.classList.add("clipped");
      cell.setAttribute("title", "beyond the " + scaleName(family) + " colour scale (±" + fmt(DATA.families[family]) + "): drawn in its end colour");
    }
  }
  /* An outlier (a trained model's massive activation: SmolLM2's 22,543) clips its family's scale
     (BlockRecord.scale_of): the cells beyond it have the scale's end colour and a dotted outline. */
  const CLIPPED = DATA.clipped || {};
  /* What a legend calls a family's colour scale: the scenes' colour-bar name ("residual stream", "weights (√ scale)"). */
  function scaleName(family) { return DATA.scale_names.families[family]; }
  function clippedLegend() {
    const families = Object.keys(CLIPPED);
    if (!families.length) return null;
    const parts = families.map(function (family) { return scaleName(family) + " ±" + fmt(DATA.families[family]) + " (its largest |value|: " + fmt(CLIPPED[family]) + ")"; });
    return el("p", { class: "note clipnote" }, textEl("span", "clipped", "clipsample"),
              textEl("span", " Colour scales clipped at an outlier: " + parts.join("; ") + ". A cell beyond its scale has the scale's end colour and a dotted outline; its number is the real one."));
  }

  const ROLE_VAR = { query: "--q", key: "--k", value: "--v", output: "--o", residual: "--r", ffn: "--f" };

  /* ---------- number tables ---------- */

  /* spec: {caption, columns: [labels], blockedColumns: [bool], resultColumn: index, rows: [row]}.
     A row is {label, role, result, blocked, values, field, at, fieldColumns, param, family, texts, blockedCells, operands(c) → text}
     (one quantity along the row) or {label, role, result, blocked, cells: [cell or null]} (one per column).
     A cell is {value, text, field, at, param, family, blocked, operands() → text}; its colour scale is
     its field's family, its parameter's (DATA.param_families), or the family it names. */
  function rowCells(row) {
    if (row.cells) return row.cells;
    return row.values.map(function (value, c) {
      if (value === null) return null;
      const isField = row.field && !(row.fieldColumns && row.fieldColumns[c] === null);
      return {
        value: value, text: row.texts ? row.texts[c] : undefined,
        field: isField ? row.field : null, at: isField ? row.at.concat(row.fieldColumns ? row.fieldColumns[c] : [c]) : (row.param ? row.at.concat([c]) : null),
        param: row.param || null, family: row.family, blocked: row.blockedCells ? row.blockedCells[c] : undefined,
        operands: row.operands ? function () { return row.operands(c); } : null,
      };
    });
  }
  function cellFamily(cell) { return cell.field ? familyOf(cell.field) : cell.param ? DATA.param_families[cell.param] : cell.family; }
  function cellText(cell) { return cell.text !== undefined ? cell.text : fmt(cell.value); }

  /* Wide rows (d_model 384, d_ff 1536) are elided: spec.show lists the columns shown (the first,
     the last and the largest-magnitude ones, chosen by blockviz.explorer.payload); a "⋯" column
     stands for each run of hidden ones, and one switch shows every column (the table then
     scrolls in its own box). */
  function layoutColumns(spec) {
    const all = range(spec.columns.length);
    if (!spec.show || (state.allColumns && !spec.fixed)) return { items: all.map(function (c) { return { c: c }; }), hidden: 0 };
    const items = [];
    let last = -1;
    spec.show.forEach(function (c) {
      if (c > last + 1) items.push({ gap: c - last - 1 });
      items.push({ c: c });
      last = c;
    });
    if (last < all.length - 1) items.push({ gap: all.length - 1 - last });
    return { items: items, hidden: all.length - spec.show.length };
  }
  function elisionSwitch(spec, box) {
    if (!spec.show || spec.show.length >= spec.columns.length) return null;
    if (spec.fixed) return el("span", { class: "elided" }, textEl("span", spec.fixed, "hiddennote"));
    const total = spec.elideTotal || spec.columns.length, hidden = total - spec.show.filter(function (c) { return c < total; }).length; // a sum column is not one of them
    const note = state.allColumns ? "all " + total + " columns shown" : hidden + " of " + total + " columns hidden (⋯): the first, the last and the largest";
    const button = el("button", { type: "button", class: "copy widen-toggle", text: state.allColumns ? "show fewer columns" : "show all " + total + " columns", "aria-pressed": String(state.allColumns) });
    button.addEventListener("click", function () {
      state.allColumns = !state.allColumns;
      const step = state.step;
      renderSteps();
      const again = document.querySelector("#step-" + step + " .widen-toggle");
      if (again) again.focus();
    });
    return el("span", { class: "elided" }, textEl("span", note, "hiddennote"), button);
  }

  /* The workbench's marks: a parameter cell edited (its trained value in its title), a field's number that moved
     (its shown text differs from the one the trained parameters give). */
  function indexOf(t, index) { return index.reduce(function (f, k, d) { return f * t.shape[d] + k; }, 0); }
  function markCell(td, cell) {
    if (cell.param && cell.at && LIVE.trained[cell.param]) {
      const edit = (LIVE.edits[cell.param] || []).some(function (e) { return e.slice(0, -1).join() === cell.at.join(); });
      if (edit) { td.classList.add("edited"); td.setAttribute("title", "edited: trained " + fmt(LIVE.trained[cell.param].data[indexOf(LIVE.trained[cell.param], cell.at)])); }
      return;
    }
    if (!LIVE.base || !cell.field || !cell.at || !LIVE.base[cell.field] || cell.at.length !== LIVE.base[cell.field].shape.length) return;
    const was = LIVE.base[cell.field].data[indexOf(LIVE.base[cell.field], cell.at)];
    if (fmt(was) !== cellText(cell) && !(cell.text !== undefined && was === 0)) { td.classList.add("moved"); td.setAttribute("title", "moved: " + fmt(was) + " with the trained parameters"); }
  }
  /* Type a parameter's new value in its cell: Enter keeps it, Escape leaves the cell as it was; text that is not a
     finite number is refused with a note. */
  function editCell(td, cell, box) {
    const shown = td.textContent, field = el("input", { type: "text", inputmode: "decimal", class: "celledit", value: String(cell.value), "aria-label": "new value of " + cell.param + "[" + cell.at.join(", ") + "]" });
    td.textContent = "";
    td.appendChild(field);
    field.focus();
    field.select();
    let done = false;
    function finish(keep) {
      if (done) return;
      const text = field.value.trim(), value = Number(text);
      if (keep && (text === "" || !Number.isFinite(value))) {
        showOperands(box, "\u201c" + field.value + "\u201d is not a finite number: " + cell.param + "[" + cell.at.join(", ") + "] keeps " + shown + ".");
        field.setAttribute("aria-invalid", "true");
        return;
      }
      done = true;
      if (keep && value !== cell.value) { LIVE.edit(cell.param, cell.at, value); return; }
      td.textContent = shown;
      td.focus();
    }
    field.addEventListener("keydown", function (event) {
      event.stopPropagation();
      if (event.key === "Enter") { event.preventDefault(); finish(true); }
      else if (event.key === "Escape") { event.preventDefault(); finish(false); }
    });
    field.addEventListener("click", function (event) { event.stopPropagation(); });
    field.addEventListener("blur", function () { if (!done) { done = true; td.textContent = shown; } });
  }

  /* Drag a parameter's cell sideways (mouse, pen or finger) to change its value: DRAG_STEP a pixel (Shift: a tenth),
     every number in view following while it moves; a press that does not move is a click (type a value). From the
     keyboard, Alt+↑ / Alt+↓ on the focused cell add / take DRAG_STEP (Shift: ×10), each press an edit. */
  const DRAG_STEP = 0.01, DRAG_START = 3;
  function dragCell(td, cell) {
    td.classList.add("draggable");
    td.setAttribute("aria-keyshortcuts", "Alt+ArrowUp Alt+ArrowDown");
    td.addEventListener("keydown", function (event) {
      if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown") || td.querySelector("input")) return;
      event.preventDefault();
      event.stopPropagation();
      const step = (event.key === "ArrowUp" ? 1 : -1) * DRAG_STEP * (event.shiftKey ? 10 : 1);
      LIVE.edit(cell.param, cell.at, parseFloat((cell.value + step).toPrecision(7)));
    });
    td.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || td.querySelector("input")) return;
      const x0 = event.clientX, start = cell.value, id = event.pointerId;
      let moved = false, value = start;
      function move(e) {
        if (e.pointerId !== id) return;
        const dx = e.clientX - x0;
        if (!moved && Math.abs(dx) < DRAG_START) return;
        if (!moved) { moved = true; try { td.setPointerCapture(id); } catch (ignored) { /* a synthetic pointer */ } }
        value = parseFloat((start + dx * DRAG_STEP * (e.shiftKey ? 0.1 : 1)).toFixed(e.shiftKey ? 4 : 3));
        LIVE.drag(cell.param, cell.at, value, false);
      }
      function up(e) {
        if (e.pointerId !== id) return;
        document.removeEventListener("pointermove", move);
        document.removeEventListener("pointerup", up);
        document.removeEventListener("pointercancel", up);
        if (!moved) return;
        LIVE.drag(cell.param, cell.at, value, true);
        const again = document.querySelector('[data-param="' + cell.param + '"][data-at="' + cell.at.join(",") + '"]');
        if (again) again.setAttribute("data-dragged", ""); // swallow the click that ends the drag
      }
      document.addEventListener("pointermove", move);
      document.addEventListener("pointerup", up);
      document.addEventListener("pointercancel", up);
    });
  }
  function numTable(spec, box) {
    const captionId = "table-" + (++tableCount);
    const table = el("table", { class: "nums", "aria-labelledby": captionId });
    const csv = el("button", { type: "button", class: "copy", text: "Copy CSV", "aria-label": "Copy CSV: " + spec.caption });
    const md = el("button", { type: "button", class: "copy", text: "Copy Markdown", "aria-label": "Copy Markdown: " + spec.caption });
    const caption = el("div", { class: "tablecap" }, el("p", { id: captionId, text: spec.caption }), elisionSwitch(spec, box), spec.switch || null, el("span", { class: "copies" }, csv, md));
    const shown = layoutColumns(spec);
    const head = el("tr", null, el("td", { class: "corner" }));
    shown.items.forEach(function (item) {
      if (item.gap) { head.appendChild(el("th", { scope: "col", class: "gap", text: "⋯", title: item.gap + " columns hidden", "aria-label": item.gap + " columns hidden" })); return; }
      head.appendChild(el("th", { scope: "col", text: spec.columns[item.c], class: spec.blockedColumns && spec.blockedColumns[item.c] ? "struck" : null }));
    });
    table.appendChild(el("thead", null, head));
    const body = el("tbody");
    const grid = spec.rows.map(function (row) { const cells = rowCells(row); return { row: row, cells: shown.items.filter(function (item) { return !item.gap; }).map(function (item) { return cells[item.c] === undefined ? null : cells[item.c]; }) }; });
    const tds = grid.map(function () { return []; }); // tds[r][c]: the number cells, for the keyboard
    const visibleCols = shown.items.filter(function (item) { return !item.gap; }).map(function (item) { return item.c; });
    grid.forEach(function (line, r) {
      const row = line.row;
      const tr = el("tr", { class: [row.result ? "result" : "", row.blocked ? "blocked" : ""].join(" ").trim() || null });
      const th = el("th", { scope: "row", class: "rowhead", text: row.label });
      if (row.role) th.style.setProperty("border-left-color", "var(" + ROLE_VAR[row.role] + ")");
      tr.appendChild(th);
      let k = 0;
      shown.items.forEach(function (item) {
        if (item.gap) { tr.appendChild(el("td", { class: "gap", text: "⋯", "aria-hidden": "true" })); return; }
        const c = k++, col = item.c, cell = line.cells[c];
        if (cell === null) { tr.appendChild(el("td", { class: "empty" })); return; }
        const td = el("td", { class: col === spec.resultColumn ? "num result" : "num", text: cellText(cell) });
        if (cell.field) { td.setAttribute("data-field", cell.field); td.setAttribute("data-at", cell.at.join(",")); }
        if (cell.param) { td.setAttribute("data-param", cell.param); td.setAttribute("data-at", cell.at.join(",")); }
        const name = row.cells ? spec.columns[col] + " [" + row.label + "]" : row.label + "[" + spec.columns[col] + "]"; // a key's row: "weight [3 fox]"
        if (LIVE && cell.param && cell.at) dragCell(td, cell);
        td.addEventListener("click", function () {
          if (td.hasAttribute("data-dragged")) { td.removeAttribute("data-dragged"); return; } // the end of a drag, not a click
          if (LIVE && cell.param && cell.at && !td.querySelector("input")) { editCell(td, cell, box); return; }
          showOperands(box, name + " = " + (cell.operands ? cell.operands() : td.textContent + (cell.field ? "  (" + cell.field + " in the record)" : cell.param ? "  (" + cell.param + ")" : "")));
        });
        if (row.sums) td.classList.add("plain"); else paint(td, cell.value, cellFamily(cell), cell.blocked); // a sum is not its column's quantity: uncoloured
        if (LIVE) markCell(td, cell);
        td.tabIndex = -1;
        td.addEventListener("keydown", function (event) { cellKeys(event, tds, r, c); });
        tds[r][c] = td;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    const first = [].concat.apply([], tds).filter(Boolean)[0];
    if (first) first.tabIndex = 0; // one tab stop per table; the arrows move inside it
    const textSpec = { columns: visibleCols.map(function (c) { return spec.columns[c]; }) };
    csv.addEventListener("click", function () { copyText(box, tableText(textSpec, grid, "csv")); });
    md.addEventListener("click", function () { copyText(box, tableText(textSpec, grid, "md")); });
    return el("div", { class: "tablebox" }, caption, el("div", { class: "scroll", "data-label": spec.caption }, table));
  }
  let tableCount = 0;

  /* Keyboard in a table: one tab stop, the arrows (and Home, End) move between its numbers,
     Enter or Space shows a number's operands, as a click does. */
  function cellKeys(event, tds, r, c) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); tds[r][c].click(); return; }
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    let target = null;
    if (event.key in moves) {
      const dr = moves[event.key][0], dc = moves[event.key][1];
      for (let rr = r + dr, cc = c + dc; rr >= 0 && rr < tds.length && cc >= 0; rr += dr, cc += dc) {
        if (dr === 0 && cc >= tds[rr].length) break;
        if (tds[rr][cc]) { target = tds[rr][cc]; break; }
      }
    } else if (event.key === "Home") target = tds[r].filter(Boolean)[0];
    else if (event.key === "End") target = tds[r].filter(Boolean).slice(-1)[0];
    else return;
    event.preventDefault(); // at an edge the focus stays: the arrows never leave the table
    if (!target) return;
    tds[r][c].tabIndex = -1;
    target.tabIndex = 0;
    target.focus();
  }

  function tableText(spec, grid, kind) {
    const header = [""].concat(spec.columns);
    const lines = [header].concat(grid.map(function (line) {
      return [line.row.label].concat(line.cells.map(function (cell) { return cell === null ? "" : cellText(cell); }));
    }));
    if (kind === "csv") { // ASCII minus: a spreadsheet reads "-0.25" as a number, not "−0.25"
      return lines.map(function (cells) {
        return cells.map(function (text) { const cell = ascii(text); return /[",\n]/.test(cell) ? '"' + cell.replace(/"/g, '""') + '"' : cell; }).join(",");
      }).join("\n") + "\n";
    }
    const esc = function (cell) { return cell.replace(/\|/g, "\\|"); };
    const out = ["| " + lines[0].map(esc).join(" | ") + " |", "|" + lines[0].map(function () { return "---"; }).join("|") + "|"];
    lines.slice(1).forEach(function (cells) { out.push("| " + cells.map(esc).join(" | ") + " |"); });
    return out.join("\n") + "\n";
  }

  function showOperands(box, text) {
    box.operands.textContent = text;
    box.operands.hidden = false;
  }
  function copyText(box, text) {
    box.copied.value = text;
    box.copied.hidden = false;
    box.copied.select();
    const done = function () { box.copyNote.textContent = "Copied to the clipboard."; };
    const manual = function () { box.copyNote.textContent = "Press Ctrl+C (⌘C) to copy the selected text."; };
    try {
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, manual);
      else manual();
    } catch (error) { manual(); }
  }

  const LONG = 16; // a sum of more terms is written with its largest ones and the rest summed
  function sumText(terms) { // "0.12 + (−0.30) + …"
    const term = function (t, k) { const s = fmt(t); return k > 0 && s.charAt(0) === MINUS ? "(" + s + ")" : s; };
    if (terms.length <= LONG) return terms.map(term).join(" + ");
    const finite = terms.filter(Number.isFinite), total = finite.reduce(function (a, v) { return a + v; }, 0);
    return terms.slice(0, 3).map(term).join(" + ") + " + … + " + term(terms[terms.length - 1], 1) + "  (" + terms.length + " terms, sum " + fmt(total) + ")";
  }
  function sumShown(terms) { // what a written sum adds up to: its shown terms, or past LONG its shown total
    const finite = terms.filter(Number.isFinite);
    if (terms.length <= LONG) return terms.reduce(function (a, t) { return a + sv(t); }, 0);
    return sv(finite.reduce(function (a, v) { return a + v; }, 0));
  }
  /* Σ_r x[r] × W[r, c] (+ b[c]) written out; past LONG terms the LONG/2 largest and the rest as one sum. */
  function dotOperands(x, W, bias, c, xName, wName, bName, result) {
    const k = colOf(W, c);
    if (k < 0) return "this page does not carry column " + c + " of " + wName + " (only those of the shown columns): the value is the record's";
    let shown = 0; // what the written terms add up to
    const terms = x.map(function (v, r) { return { r: r, x: v, w: W.get(r, k), t: v * W.get(r, k) }; });
    const written = function (list) { return list.map(function (t) { return fmt(t.x) + " × " + fmt(t.w); }).join(" + "); };
    let text;
    if (terms.length <= LONG) { text = written(terms); shown = terms.reduce(function (a, t) { return a + sv(t.x) * sv(t.w); }, 0); }
    else {
      const largest = terms.slice().sort(function (p, q) { return Math.abs(q.t) - Math.abs(p.t); }).slice(0, LONG / 2);
      const rest = terms.filter(function (t) { return largest.indexOf(t) < 0; }).reduce(function (a, t) { return a + t.t; }, 0);
      shown = largest.reduce(function (a, t) { return a + sv(t.x) * sv(t.w); }, sv(rest));
      text = largest.map(function (t) { return fmt(t.x) + " × " + fmt(t.w) + " [r " + t.r + "]"; }).join(" + ") + " + (the other " + (terms.length - LONG / 2) + " terms: " + fmt(rest) + ")";
    }
    const head = "Σ over " + x.length + " r of " + xName + "[r] × " + wName + "[r, " + c + "]";
    if (!bias) return head + " = " + text + eq(shown, result) + fmt(result);
    return head + " + " + bName + "[" + c + "] = " + text + " + " + fmt(bias[c]) + eq(shown + sv(bias[c]), result) + fmt(result);
  }

  /* ---------- checks ---------- */

  /* pairs: [[computed values, record values, scales?], …] → {delta, ok, count}. A value passes when
     |computed − record| ≤ TOLERANCE × scale; the scale is 1 + |record value|, or for a dot
     product 1 + Σ |terms| (float32 rounds each term: at d_model 384–1536 the sum's rounding
     grows with the terms, not with the result). Entries that are null (a column the page does
     not carry) are not compared. */
  function compare(pairs) {
    let delta = 0, ok = true, count = 0;
    pairs.forEach(function (pair) {
      const got = [].concat(pair[0]), want = [].concat(pair[1]), scales = pair[2] ? [].concat(pair[2]) : null;
      if (got.length !== want.length) { ok = false; delta = Infinity; return; }
      got.forEach(function (g, k) {
        if (g === null) return;
        const w = want[k];
        count++;
        if (g === w) return; // equal, −∞ included
        const diff = Math.abs(g - w);
        if (!(diff <= TOLERANCE * (scales ? scales[k] : 1 + Math.abs(w)))) ok = false;
        delta = Math.max(delta, Number.isNaN(diff) ? Infinity : diff);
      });
    });
    return { delta: delta, ok: ok, count: count };
  }
  function checkLine(pairs, note) {
    if (pairs === null) return el("p", { class: "check given", text: "ⓘ " + note, title: "nothing in this one layer recomputes it" });
    const result = compare(pairs);
    const against = LIVE && LIVE.T ? "the page's forward pass" : "the record";
    const text = (result.ok ? "✓ matches " + against : "✗ differs from " + against) + " (max |Δ| " + fmtDelta(result.delta) + ")" + (note ? " " + note : "");
    return el("p", { class: result.ok ? "check ok" : "check bad", text: text, title: "recomputed in the page from the step's inputs and compared with the record" });
  }

  /* ---------- labels ---------- */

  const SPECIAL = DATA.special || [];
  function tokenLabel(j) { return j + " " + TOKENS[j]; }
  function cols(prefix, n) { return range(n).map(function (k) { return prefix + k; }); }
  function blockedKeys(i) { return range(N).map(function (j) { return at(T.mask, i, j) === -Infinity; }); }
  /* the columns an elided row of field shows (null: all); a per-head field's are its head's */
  function shownOf(field, head) {
    const chosen = DATA.columns[field];
    if (!chosen) return null;
    return Array.isArray(chosen[0]) ? chosen[head] : chosen;
  }
  function widthOf(field) { const shape = T[field].shape; return shape[shape.length - 1]; }
  function prefixOf(field) { return DATA.fields[field].shape.slice(-1)[0] === "d_ff" ? "f" : "d"; }
  function rowTable(caption, field, head, rows, box, extra) {
    return numTable(Object.assign({ caption: caption, columns: cols(prefixOf(field), widthOf(field)), show: shownOf(field, head), rows: rows }, extra || {}), box);
  }
  function cutNote(W, name) { // a weight matrix the page carries only in part
    return W.cut ? textEl("p", "The page carries only the columns of " + name + " behind the shown ones (the whole " + W.rows + " × " + W.width +
      " would add megabytes): those are recomputed and checked; the other columns (show all) are the record's.", "note") : null;
  }

  /* ---------- a field its step does not draw itself ---------- */

  /* Every field names the step that shows it (DATA.fields[f].step: its explorer_step in blockviz.record_fields).
     A field of a step that the step's own tables do not hold (one declared since the step was written) still has
     its place there: the record's numbers of the selected token (and head), as recorded, in a plain table. */
  function unplacedFields(stepName, nodes) {
    return Object.keys(DATA.fields).filter(function (field) {
      if (DATA.fields[field].step !== stepName) return false;
      const selector = '[data-field="' + field + '"]';
      return !nodes.some(function (node) { return node && node.nodeType === 1 && (node.matches(selector) || node.querySelector(selector)); });
    });
  }
  const AXIS_PREFIXES = { d_model: "d", d_head: "d", d_ff: "f", n_vocab: "v" }; // blockviz.record_fields.COLUMN_PREFIXES
  function axisLabels(word, size) { // blockviz.record_fields.axis_labels
    if (word === "n") return range(size).map(tokenLabel);
    if (word === "n_heads") return range(size).map(function (g) { return "h" + g; });
    if (word === "n_vocab" && VOCABULARY.length === size) return VOCABULARY.slice();
    return cols(AXIS_PREFIXES[word] || "c", size);
  }
  /* The field's numbers for token i (and head h): heads first, then the token's row (rows = queries); what is left
     is one number, one row (columns: its last dimension) or rows of those. A key blocked for the token reads as the
     other steps read it: −∞, or "0" for a value exactly 0 there. */
  function recordedTable(field, i, h, box) {
    const spec = DATA.fields[field], index = [];
    let words = spec.shape.slice();
    if (words[0] === "n_heads") { index.push(h); words = words.slice(1); }
    const perToken = words[0] === "n";
    if (perToken) { index.push(i); words = words.slice(1); }
    const view = sub.apply(null, [T[field]].concat(index));
    const where = (spec.shape[0] === "n_heads" ? "head " + h + ", " : "") + (perToken ? "token " + tokenLabel(i) : "every token");
    const caption = field + " (" + where + "): " + spec.what + ". The record's numbers, not recomputed here.";
    if (!words.length) return marked(numTable({ caption: caption, columns: ["value"], rows: [{ label: field, values: [at(view)], field: field, at: [], fieldColumns: [index] }] }, box), field);
    const last = words[words.length - 1], width = view.shape[view.shape.length - 1];
    const blocked = range(width).map(function (j) { return perToken && last === "n" && at(T.mask, i, j) === -Infinity; });
    const lead = view.shape.slice(0, -1), rows = [];
    const count = lead.reduce(function (a, b) { return a * b; }, 1);
    range(count).forEach(function (k) {
      const place = [];
      lead.slice().reverse().reduce(function (rest, size) { place.unshift(rest % size); return Math.floor(rest / size); }, k);
      const values = vec.apply(null, [view].concat(place));
      const label = place.length ? field + "[" + place.map(function (p, d) { return axisLabels(words[d], lead[d])[p]; }).join(", ") + "]" : field;
      rows.push({ label: label, values: values, field: field, at: index.concat(place),
                  blockedCells: values.map(function (v, j) { return blocked[j] && v === 0; }),
                  texts: values.map(function (v, j) { return blocked[j] && v === 0 ? S.blocked_weight_label : fmt(v); }) });
    });
    const shown = lead.length ? null : shownOf(field, h);
    return marked(numTable({ caption: caption, columns: axisLabels(last, width), show: shown, rows: rows }, box), field);
  }
  function marked(table, field) { table.setAttribute("data-recorded", field); return table; }

  /* ---------- the steps: each returns {body: [nodes], checks: [[computed, record, scales?], …]} ---------- */

  const EPS = String(parseFloat(C.ln_eps.toPrecision(6))).replace("-", MINUS); // 0.00001, 1e−12 (a float32 ε printed short)
  function normStep(i, box, args) {
    const name = args.name || "ln" + args.n, source = args.source, output = args.output; // ln1, ln2, ln_f (the final LayerNorm)
    const x = vec(T[source], i), gamma = vec(P[name + ".weight"]);
    if (args.rms) {
      const meanSq = x.reduce(function (s, v) { return s + v * v; }, 0) / D;
      const root = Math.sqrt(meanSq + C.ln_eps);
      const norm = x.map(function (v) { return v / root; });
      const out = norm.map(function (v, c) { return gamma[c] * v; });
      const stats = numTable({
        caption: "statistics of the row (over its " + D + " entries): RMSNorm does not subtract the mean",
        columns: ["value"],
        rows: [
          { label: "mean_sq = Σ x² / " + D, values: [at(T[name + "_mean_sq"], i)], field: name + "_mean_sq", at: [], fieldColumns: [[i]], operands: function () { const sq = x.map(function (v) { return v * v; }); return "(" + sumText(sq) + ") / " + D + eq(sumShown(sq) / D, meanSq) + fmt(meanSq); } },
          { label: "rms = √(mean_sq + ε), ε = " + EPS, values: [root], family: familyOf(name + "_mean_sq"), operands: function () { return "√(" + fmt(meanSq) + " + " + EPS + ")" + eq(Math.sqrt(sv(meanSq) + C.ln_eps), root) + fmt(root); } },
        ],
      }, box);
      const rows = rowTable("the row divided by its rms, then scaled by γ (no β)", output, 0, [
        { label: source, values: x, field: source, at: [i], role: "residual" },
        { label: name + "_norm = x / rms", values: vec(T[name + "_norm"], i), field: name + "_norm", at: [i], operands: function (c) { return fmt(x[c]) + " / " + fmt(root) + eq(sv(x[c]) / sv(root), norm[c]) + fmt(norm[c]); } },
        { label: "γ (" + name + ".weight)", values: gamma, param: name + ".weight", at: [] },
        { label: output + " = γ ⊙ norm", values: vec(T[output], i), field: output, at: [i], result: true, operands: function (c) { return fmt(gamma[c]) + " × " + fmt(norm[c]) + eq(sv(gamma[c]) * sv(norm[c]), out[c]) + fmt(out[c]); } },
      ], box);
      return { body: [stats, rows], checks: [[meanSq, at(T[name + "_mean_sq"], i)], [norm, vec(T[name + "_norm"], i)], [out, vec(T[output], i)]] };
    }
    const beta = vec(P[name + ".bias"]), ln = MATH.layerNormRow(x, gamma, beta, C.ln_eps);
    const mean = ln.mean, variance = ln.variance, root = ln.root, centred = ln.centred, norm = ln.norm, out = ln.out;
    const stats = numTable({
      caption: "statistics of the row (over its " + D + " entries)",
      columns: ["value"],
      rows: [
        { label: "mean = Σ x / " + D, values: [at(T[name + "_mean"], i)], field: name + "_mean", at: [], fieldColumns: [[i]], operands: function () { return "(" + sumText(x) + ") / " + D + eq(sumShown(x) / D, mean) + fmt(mean); } },
        { label: "var = Σ (x − mean)² / " + D, values: [at(T[name + "_var"], i)], field: name + "_var", at: [], fieldColumns: [[i]], operands: function () { const sq = centred.map(function (v) { return v * v; }); return "(" + sumText(sq) + ") / " + D + eq(sumShown(sq) / D, variance) + fmt(variance); } },
        { label: "√(var + ε), ε = " + EPS, values: [root], family: familyOf(name + "_var"), operands: function () { return "√(" + fmt(variance) + " + " + EPS + ")" + eq(Math.sqrt(sv(variance) + C.ln_eps), root) + fmt(root); } },
      ],
    }, box);
    const rows = rowTable("the row, normalised, then scaled by γ and shifted by β", output, 0, [
      { label: source, values: x, field: source, at: [i], role: "residual" },
      { label: name + "_centred = x − mean", values: vec(T[name + "_centred"], i), field: name + "_centred", at: [i], operands: function (c) { return fmt(x[c]) + " − " + fmt(mean) + eq(sv(x[c]) - sv(mean), centred[c]) + fmt(centred[c]); } },
      { label: name + "_norm = (x − mean) / √(var + ε)", values: vec(T[name + "_norm"], i), field: name + "_norm", at: [i], operands: function (c) { return fmt(centred[c]) + " / " + fmt(root) + eq(sv(centred[c]) / sv(root), norm[c]) + fmt(norm[c]); } },
      { label: "γ (" + name + ".weight)", values: gamma, param: name + ".weight", at: [] },
      { label: "β (" + name + ".bias)", values: beta, param: name + ".bias", at: [] },
      { label: output + " = γ ⊙ norm + β", values: vec(T[output], i), field: output, at: [i], result: true, operands: function (c) { return fmt(gamma[c]) + " × " + fmt(norm[c]) + " + " + fmt(beta[c]) + eq(sv(gamma[c]) * sv(norm[c]) + sv(beta[c]), out[c]) + fmt(out[c]); } },
    ], box);
    return {
      body: [stats, rows],
      checks: [[mean, at(T[name + "_mean"], i)], [centred, vec(T[name + "_centred"], i)], [variance, at(T[name + "_var"], i)], [norm, vec(T[name + "_norm"], i)], [out, vec(T[output], i)]],
    };
  }

  /* The term table of x · W: one row per input entry (past 48, the 48 whose terms are largest). */
  function projectionTerms(x, W, xName, wName, family) {
    let rowsShown = range(x.length);
    if (x.length > 48) {
      const size = rowsShown.map(function (r) { return W.cols.reduce(function (m, c, k) { return Math.max(m, Math.abs(x[r] * W.get(r, k))); }, 0); });
      rowsShown = rowsShown.slice().sort(function (p, q) { return size[q] - size[p]; }).slice(0, 48).sort(function (p, q) { return p - q; });
    }
    return rowsShown.map(function (r) {
      const values = new Array(W.width).fill(null);
      W.cols.forEach(function (c, k) { values[c] = x[r] * W.get(r, k); });
      return { label: xName + "[" + r + "] × " + wName + "[" + r + ", ·]", family: family, values: values,
               operands: function (c) { const k = colOf(W, c); return fmt(x[r]) + " × " + fmt(W.get(r, k)) + eq(sv(x[r]) * sv(W.get(r, k)), x[r] * W.get(r, k)) + fmt(x[r] * W.get(r, k)); } };
    });
  }
  /* A term table has the columns of the weights the page carries: when they are cut to the shown ones, only those (no switch). */
  function termSpec(caption, columns, W, shown, rows) {
    if (!W.cut) return { caption: caption, columns: columns, show: shown, rows: rows };
    return { caption: caption, columns: columns, show: W.cols, rows: rows, fixed: (W.width - W.cols.length) + " of " + W.width + " columns not in this page" };
  }
  function termsDetails(summaryText, spec, box, count) {
    const note = count > 48 ? " (the 48 rows of " + count + " with the largest terms; the sums are over all " + count + ")" : "";
    const details = el("details", null, textEl("summary", summaryText + note));
    let built = false;
    details.addEventListener("toggle", function () {
      if (details.open && !built) { built = true; details.appendChild(numTable(spec(), box)); markScrollers(); }
    });
    return details;
  }

  function keyRows(i, cellsOf) { // one row per key j: its cells, struck through when the mask blocks it
    const blocked = blockedKeys(i);
    return range(N).map(function (j) { return { label: (blocked[j] ? "\u2715 " : "") + tokenLabel(j), role: "key", blocked: blocked[j], cells: cellsOf(j) }; });
  }

  function residualStep(i, box, a, b, out, role) {
    const x = vec(T[a], i), y = vec(T[b], i), got = add(x, y);
    return {
      body: [rowTable("token " + tokenLabel(i) + ": the residual stream plus the sub-layer's output", out, 0, [
        { label: a, values: x, field: a, at: [i], role: "residual" },
        { label: "+ " + b, values: y, field: b, at: [i], role: role },
        { label: out, values: vec(T[out], i), field: out, at: [i], role: "residual", result: true, operands: function (c) { return fmt(x[c]) + " + " + fmt(y[c]) + eq(sv(x[c]) + sv(y[c]), got[c]) + fmt(got[c]); } },
      ], box)],
      checks: [[got, vec(T[out], i)]],
    };
  }

  /* ---------- a language model's last step: the next word (blockviz's trained toy model) ---------- */

  const VOCABULARY = (DATA.source && DATA.source.vocabulary) || [];
  const V = C.vocab_size || VOCABULARY.length;
  const TOP_WORDS = 5; // blockviz.prediction.TOP_WORDS: the words the prediction names; the others are one term
  const OTHERS = "+ others"; // blockviz.prediction.OTHERS
  const WORD_ROWS = 10; // a table of one row per vocabulary word shows the largest this many (a switch shows all)
  function wordsCounted(ids) { // "69 words and <unk>": a toy model's unknown token (id 0) is not counted as a word (blockviz.prediction.vocabulary_phrase)
    const unknown = VOCABULARY.length > 0 && ids.indexOf(0) >= 0; // a toy vocabulary starts with its unknown token
    return (ids.length - (unknown ? 1 : 0)) + " words" + (unknown ? " and " + VOCABULARY[0] : "");
  }
  function wordName(w) { return VOCABULARY[w] !== undefined ? VOCABULARY[w] : String(w); }
  function quoted(text) { return text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' + text + '"' : "'" + text + "'"; } // as Python's repr
  function ranked(values) { // word ids, largest value first, ties by id (blockviz.prediction.prediction_of)
    return range(values.length).sort(function (a, b) { return values[b] - values[a] || a - b; });
  }
  function wordsSwitch(shown) {
    if (V <= WORD_ROWS) return null;
    const note = state.allWords ? "all " + wordsCounted(range(V)) : "the " + shown + " largest of " + wordsCounted(range(V));
    const button = el("button", { type: "button", class: "copy words-toggle", text: state.allWords ? "show the " + WORD_ROWS + " largest" : "show all " + wordsCounted(range(V)), "aria-pressed": String(state.allWords) });
    button.addEventListener("click", function () {
      const step = button.closest(".step").getAttribute("data-step");
      state.allWords = !state.allWords;
      renderSteps();
      const again = document.querySelector("#step-" + step + " .words-toggle");
      if (again) again.focus();
    });
    return el("span", { class: "elided" }, textEl("span", note, "hiddennote"), button);
  }
  /* The shown terms of the prediction (blockviz.prediction.Prediction): the TOP_WORDS largest
     probabilities by word, then the others summed; "=" when the terms as written add up to the
     total as written, "≈" when rounding each on its own makes them miss it. */
  function predictionTerms(probs) {
    const order = ranked(probs), top = order.slice(0, TOP_WORDS), rest = order.slice(TOP_WORDS);
    const others = rest.reduce(function (a, w) { return a + probs[w]; }, 0);
    const total = probs.reduce(function (a, v) { return a + v; }, 0);
    const values = top.map(function (w) { return probs[w]; }).concat([others]);
    const written = values.reduce(function (a, v) { return a + parseFloat(ascii(fmt(v))); }, 0);
    const sign = Math.abs(written - parseFloat(ascii(fmt(total)))) < 0.5 * Math.pow(10, -S.decimals) ? "=" : "\u2248";
    return { order: order, top: top, rest: rest, others: others, total: total, values: values, written: written, sign: sign };
  }

  const SOURCE = DATA.source || {};
  const STEPS = {
    input: function (i, h, box, args) {
      const e = vec(T.embed, i), x = vec(T.resid_pre, i), hasPos = !!T.pos_embed;
      const p = hasPos ? vec(T.pos_embed, i) : null, sum = hasPos ? add(e, p) : e;
      const rows = [{ label: "embed", values: e, field: "embed", at: [i], role: "residual" }];
      if (hasPos) rows.push({ label: "position", values: p, field: "pos_embed", at: [i], role: "residual" });
      if (STACK && STACK.block > 0) { // a later block of the stack: its input is the block before's output, as it left it
        const k = STACK.block, before = vec(STACK.views[k - 1].resid_post, i);
        rows.push({ label: "block " + (k - 1) + "'s resid_post", values: before, family: familyOf("resid_pre"), role: "residual" });
        rows.push({ label: "x (block " + k + "'s resid_pre)", values: x, field: "resid_pre", at: [i], role: "residual", result: true,
                    operands: function (c) { return "block " + (k - 1) + "'s resid_post[" + c + "] = " + fmt(before[c]) + ", passed on unchanged"; } });
        return { body: [rowTable("token " + tokenLabel(i) + ": the embedding and position block 0 started from; x is what block " + (k - 1) + " handed on, the residual stream block " + k + " reads", "resid_pre", 0, rows, box)],
                 checks: [[before, x]], note: "— x = block " + (k - 1) + "'s resid_post" };
      }
      if (args.model && T.prev_output) { // a later layer: its input is the layer before's output, which the record holds as the model returned it
        const before = vec(T.prev_output, i), previous = SOURCE.layer - 1;
        rows.push({ label: "layer " + previous + "'s output", values: before, field: "prev_output", at: [i], role: "residual" });
        rows.push({ label: "x (layer " + SOURCE.layer + "'s input)", values: x, field: "resid_pre", at: [i], role: "residual", result: true,
                    operands: function (c) { return "layer " + previous + "'s output[" + c + "] = " + fmt(before[c]) + ", passed on unchanged"; } });
        const what = "the model's embedding row" + (hasPos ? " and position row" : "") + " of token " + tokenLabel(i) + " (what layer 0 started from); x is the hidden state after layers 0–" +
          previous + ": layer " + previous + "'s output, the residual stream this layer reads";
        return { body: [rowTable(what, "resid_pre", 0, rows, box)], checks: [[before, x]],
                 note: "— x = layer " + previous + "'s output (a forward hook on layer " + previous + "; x was taken as layer " + SOURCE.layer + "'s input)" };
      }
      if (args.model) {
        rows.push({ label: "x (layer " + SOURCE.layer + "'s input)", values: x, field: "resid_pre", at: [i], role: "residual", result: true });
        // Layer 0 of a decoder takes the embeddings themselves (+ positions); later layers (and BERT's, after its embedding LayerNorm) what the layers before made.
        const direct = SOURCE.layer === 0 && SOURCE.family !== "bert";
        const what = "the model's embedding row" + (hasPos ? " and position row" : "") + " of token " + tokenLabel(i) + "; x is the hidden state " +
          (SOURCE.layer === 0 ? "the layer receives" : "after layers 0–" + (SOURCE.layer - 1)) + ", the residual stream this layer reads";
        return { body: [rowTable(what, "resid_pre", 0, rows, box)], checks: direct ? [[sum, x]] : null,
                 note: direct ? null : "the layer's input as the model computed it (" + (SOURCE.layer === 0 ? "the model's embedding layer adds token types and a LayerNorm, which" : "layers 0–" + (SOURCE.layer - 1) + ", which") +
                   " this one-layer record does not hold, so it is not recomputed; the record was checked against the model's own output of layer " + SOURCE.layer + " when it was made)" };
      }
      rows.push({ label: hasPos ? "x" : "x = embed", values: x, field: "resid_pre", at: [i], role: "residual", result: true, operands: hasPos ? function (c) { return fmt(e[c]) + " + " + fmt(p[c]) + eq(sv(e[c]) + sv(p[c]), sum[c]) + fmt(sum[c]); } : null });
      const rounded = hasPos && range(D).some(function (c) { return eq(sv(e[c]) + sv(p[c]), sum[c]) !== " = "; });
      const body = [rowTable("token " + tokenLabel(i) + (hasPos ? ": its embedding plus its position's encoding" : ": its embedding (rotary positions act on q and k)"), "resid_pre", 0, rows, box)];
      if (rounded) body.push(textEl("p", "x is the sum of the unrounded rows: in a column the two rows as written may add up to 0.01 more or less (click a cell of x for its sum, with \u2248).", "note"));
      return { body: body, checks: [[sum, x]] };
    },
    norm: function (i, h, box, args) { return normStep(i, box, args); },
    qkv: function (i, h, box, args) {
      const input = args.input, a = vec(T[input], i), body = [], checks = [], g = kvHead(h);
      body.push(rowTable("input: " + input + " of token " + tokenLabel(i), input, 0, [{ label: input, values: a, field: input, at: [i] }], box));
      if (KV !== H) {
        const sharing = range(H).filter(function (q) { return kvHead(q) === g; });
        body.push(textEl("p", "Grouped-query attention: " + H + " query heads share " + KV + " key/value heads. Query head " + h + " uses key/value head " + g +
          " (W_K[" + g + "], W_V[" + g + "]), which query heads " + sharing.join(", ") + " share: their keys and values are the same.", "note kvnote"));
      }
      const rows = [], Ws = {};
      [["Q", "query", "q", h], ["K", "key", "k", g], ["V", "value", "v", g]].forEach(function (names) {
        const W = weight("attn.W_" + names[0], names[3]), b = args.bias ? vec(P["attn.b_" + names[0]], names[3]) : null;
        const got = linear(a, W, b), head = "[" + (names[0] === "Q" ? "h" : KV !== H ? "g" : "h") + names[3] + "]";
        Ws[names[0]] = { W: W, b: b, head: head };
        rows.push({ label: names[2] + " = " + input + " · W_" + names[0] + head + (b ? " + b_" + names[0] : ""), values: vec(T[names[1]], h, i), field: names[1], at: [h, i], role: names[1],
                    operands: function (c) { return dotOperands(a, W, b, c, input, "W_" + names[0] + head, "b_" + names[0], got.values[c]); } });
        checks.push([carried(got.values, W), carried(vec(T[names[1]], h, i), W), carried(got.scale, W)]);
      });
      body.push(rowTable("head " + h + ": query, key and value of token " + tokenLabel(i), "query", h, rows, box));
      const note = cutNote(Ws.Q.W, "W_Q, W_K and W_V");
      if (note) body.push(note);
      ["Q", "K", "V"].forEach(function (m) {
        const W = Ws[m].W, b = Ws[m].b;
        body.push(termsDetails("Terms of " + input + " · W_" + m + Ws[m].head + (b ? " + b_" + m : ""), function () {
          const terms = projectionTerms(a, W, input, "W_" + m, familyOf(m === "Q" ? "query" : m === "K" ? "key" : "value"));
          if (b) terms.push({ label: "b_" + m, values: b, param: "attn.b_" + m, at: [m === "Q" ? h : g] });
          return termSpec("each row is one term; the column sums are the " + m.toLowerCase() + " above", cols("d", E), W, shownOf("query", h), terms);
        }, box, a.length));
      });
      return { body: body, checks: checks };
    },
    rotary: function (i, h, box) {
      const cos = vec(T.rope_cos, i), sin = vec(T.rope_sin, i), half = E / 2, body = [], checks = [];
      body.push(textEl("p", "Rotary positions turn each pair of features (c, c + " + half + ") of the query and the key by an angle that grows with the position (" + i +
        " here): rotate_half(x) = (−x[" + half + "…" + (E - 1) + "], x[0…" + (half - 1) + "]). A query and a key then score by how far apart they are, not where they are.", "note"));
      [["query", "q", "query_rot"], ["key", "k", "key_rot"]].forEach(function (names) {
        const x = vec(T[names[0]], h, i), rot = x.map(function (v, c) { return c < half ? -x[c + half] : x[c - half]; });
        const got = x.map(function (v, c) { return v * cos[c] + rot[c] * sin[c]; });
        const role = names[0];
        body.push(rowTable("head " + h + ", token " + tokenLabel(i) + ": " + names[1] + " before and after rotation", names[2], h, [
          { label: names[1] + " (before)", values: x, field: names[0], at: [h, i], role: role },
          { label: "cos", values: cos, field: "rope_cos", at: [i] },
          { label: "rotate_half(" + names[1] + ")", values: rot, family: familyOf(names[0]), operands: function (c) { return c < half ? MINUS + names[1] + "[" + (c + half) + "] = " + fmt(rot[c]) : names[1] + "[" + (c - half) + "] = " + fmt(rot[c]); } },
          { label: "sin", values: sin, field: "rope_sin", at: [i] },
          { label: names[2], values: vec(T[names[2]], h, i), field: names[2], at: [h, i], role: role, result: true,
            operands: function (c) { return fmt(x[c]) + " × " + fmt(cos[c]) + " + " + fmt(rot[c]) + " × " + fmt(sin[c]) + eq(sv(x[c]) * sv(cos[c]) + sv(rot[c]) * sv(sin[c]), got[c]) + fmt(got[c]); } },
        ], box));
        checks.push([got, vec(T[names[2]], h, i)]);
      });
      return { body: body, checks: checks };
    },
    scores: function (i, h, box, args) {
      const qf = args.rotary ? "query_rot" : "query", kf = args.rotary ? "key_rot" : "key", qn = args.rotary ? "q_rot" : "q", kn = args.rotary ? "k_rot" : "k";
      const q = vec(T[qf], h, i), blocked = blockedKeys(i), got = [], scales = [], rows = [];
      rows.push({ label: qn + " of " + tokenLabel(i), values: q.concat([null]), field: qf, at: [h, i], role: "query" });
      range(N).forEach(function (j) {
        const k = vec(T[kf], h, j), terms = q.map(function (v, c) { return v * k[c]; });
        const sum = terms.reduce(function (s, v) { return s + v; }, 0);
        got.push(sum);
        scales.push(1 + terms.reduce(function (s, v) { return s + Math.abs(v); }, 0));
        rows.push({ label: qn + " ⊙ " + kn + " of " + tokenLabel(j), values: terms.concat([at(T.scores, h, i, j)]), role: "key", blocked: blocked[j], family: familyOf("scores"),
                    field: "scores", at: [h, i], fieldColumns: terms.map(function () { return null; }).concat([[j]]),
                    operands: function (c) { return c < E ? fmt(q[c]) + " × " + fmt(k[c]) + eq(sv(q[c]) * sv(k[c]), terms[c]) + fmt(terms[c]) : sumText(terms) + eq(sumShown(terms), sum) + fmt(sum); } });
      });
      const shown = shownOf(qf, h);
      const table = numTable({ caption: "head " + h + ": element-wise products " + qn + "_c · " + kn + "_jc with every key, and their sum over all " + E + " (blocked keys struck through: their scores are masked next)",
                               columns: cols("d", E).concat(["= " + qn + " · " + kn]), show: shown ? shown.concat([E]) : null, elideTotal: E, resultColumn: E, rows: rows }, box);
      return { body: [table], checks: [[got, vec(T.scores, h, i), scales]] };
    },
    scale: function (i, h, box) {
      const s = vec(T.scores, h, i), root = Math.sqrt(E), got = s.map(function (v) { return v / root; });
      return {
        body: [textEl("p", "√(head width) = √" + E + (Math.sqrt(E) === sv(root) ? " = " : " \u2248 ") + fmt(root), "note"), numTable({
          caption: "head " + h + ", query " + tokenLabel(i) + ": one row per key", columns: ["q · k", "÷ √" + E + " = scaled"], resultColumn: 1,
          rows: keyRows(i, function (j) {
            return [{ value: s[j], field: "scores", at: [h, i, j] },
                    { value: at(T.scaled_scores, h, i, j), field: "scaled_scores", at: [h, i, j], operands: function () { return fmt(s[j]) + " / " + fmt(root) + eq(sv(s[j]) / sv(root), got[j]) + fmt(got[j]); } }];
          }),
        }, box)],
        checks: [[got, vec(T.scaled_scores, h, i)]],
      };
    },
    mask: function (i, h, box) {
      const s = vec(T.scaled_scores, h, i), m = vec(T.mask, i), got = add(s, m);
      const note = !C.causal ? "Bidirectional: every key is allowed (the mask is all 0)."
        : "Causal mask: a token sees itself and the tokens before it; later keys (\u2715) get −∞." +
          (blockedKeys(i).some(Boolean) ? "" : " This token, the last, sees every key: choose an earlier token to see a key blocked.");
      return {
        body: [textEl("p", note, "note"), numTable({
          caption: "head " + h + ", query " + tokenLabel(i) + ": one row per key", columns: ["scaled", "+ M", "= masked"], resultColumn: 2,
          rows: keyRows(i, function (j) {
            return [{ value: s[j], field: "scaled_scores", at: [h, i, j] },
                    { value: m[j], field: "mask", at: [i, j] },
                    { value: at(T.masked_scores, h, i, j), field: "masked_scores", at: [h, i, j], operands: function () { return fmt(s[j]) + " + " + fmt(m[j]) + eq(sv(s[j]) + sv(m[j]), got[j]) + fmt(got[j]); } }];
          }),
        }, box)],
        checks: [[got, vec(T.masked_scores, h, i)]],
      };
    },
    softmax: function (i, h, box) {
      // Shown: the record's row_max, exp_scores, exp_sums and weights; recomputed here only to check them.
      const m = vec(T.masked_scores, h, i), blocked = blockedKeys(i), soft = MATH.softmaxRow(m);
      const max = soft.max, exps = soft.exps, sum = soft.sum, w = soft.weights;
      const recMax = at(T.row_max, h, i), recExp = vec(T.exp_scores, h, i), recSum = at(T.exp_sums, h, i);
      const recW = vec(T.weights, h, i), total = recW.reduce(function (a, v) { return a + v; }, 0);
      const rows = keyRows(i, function (j) {
        return [{ value: m[j], field: "masked_scores", at: [h, i, j] },
                { value: recMax, field: "row_max", at: [h, i], operands: function () { return "max(" + m.map(fmt).join(", ") + ") = " + fmt(recMax) + "  (row_max in the record)"; } },
                { value: recExp[j], field: "exp_scores", at: [h, i, j], blocked: blocked[j], text: blocked[j] ? S.blocked_weight_label : undefined, operands: function () { return "exp(" + fmt(m[j]) + " − " + fmt(recMax) + ")" + eq(sv(m[j]) - sv(recMax), m[j] - recMax) + "exp(" + fmt(m[j] - recMax) + ")" + eq(Math.exp(sv(m[j] - recMax)), recExp[j]) + fmt(recExp[j]); } },
                { value: recW[j], field: "weights", at: [h, i, j], blocked: blocked[j], text: blocked[j] ? S.blocked_weight_label : undefined, operands: function () { return fmt(recExp[j]) + " / " + fmt(recSum) + eq(sv(recExp[j]) / sv(recSum), recW[j]) + fmt(recW[j]); } }];
      });
      rows.push({ label: "Σ over the keys", result: true, sums: true, cells: [null, null,
        { value: recSum, field: "exp_sums", at: [h, i], operands: function () { return sumText(recExp) + eq(sumShown(recExp), recSum) + fmt(recSum) + "  (exp_sums in the record)"; } },
        { value: total, family: S.weights_family, operands: function () { return sumText(recW) + eq(sumShown(recW), total) + fmt(total); } }] });
      return {
        body: [numTable({
          caption: "head " + h + ", query " + tokenLabel(i) + ": one row per key; the weights add up to 1", columns: ["masked", "− max", "exp(masked − max)", "÷ sum = weight"], resultColumn: 3,
          rows: rows,
        }, box)],
        checks: [[max, recMax], [exps, recExp], [sum, recSum], [w, recW], [total, 1]],
      };
    },
    mix: function (i, h, box) {
      const w = vec(T.weights, h, i), rows = [], got = new Array(E).fill(0), scales = new Array(E).fill(1), blocked = blockedKeys(i);
      range(N).forEach(function (j) {
        const v = vec(T.value, h, j), scaled = v.map(function (x) { return w[j] * x; });
        scaled.forEach(function (x, c) { got[c] += x; scales[c] += Math.abs(x); });
        rows.push({ label: fmt(w[j]) + " × v of " + tokenLabel(j), values: scaled, role: "value", blocked: blocked[j], family: familyOf("head_outputs"),
                    operands: function (c) { return fmt(w[j]) + " × " + fmt(v[c]) + eq(sv(w[j]) * sv(v[c]), scaled[c]) + fmt(scaled[c]); } });
      });
      rows.push({ label: "head_out = Σ", values: vec(T.head_outputs, h, i), field: "head_outputs", at: [h, i], role: "output", result: true,
                  operands: function (c) { const parts = rows.slice(0, N).map(function (r) { return r.values[c]; }); return sumText(parts) + eq(sumShown(parts), got[c]) + fmt(got[c]); } });
      return {
        body: [rowTable("head " + h + ": every value row scaled by its weight; the rows add up to the head's output", "head_outputs", h, rows, box)],
        checks: [[got, vec(T.head_outputs, h, i), scales]],
      };
    },
    concat: function (i, h, box) {
      const rows = [], got = [];
      range(H).forEach(function (g) {
        const out = vec(T.head_outputs, g, i);
        got.push.apply(got, out);
        rows.push({ label: "head " + g, values: range(D).map(function (c) { return Math.floor(c / E) === g ? out[c - g * E] : null; }), role: "output",
                   field: "head_outputs", at: [g, i], fieldColumns: range(D).map(function (c) { return [c - g * E]; }) });
      });
      rows.push({ label: "concat", values: vec(T.concat, i), field: "concat", at: [i], role: "output", result: true });
      return { body: [rowTable("the " + H + " heads' outputs of token " + tokenLabel(i) + " side by side (head g fills columns " + E + "·g … " + E + "·g + " + (E - 1) + ")", "concat", 0, rows, box)], checks: [[got, vec(T.concat, i)]] };
    },
    linear: function (i, h, box, args) {
      const input = args.input, output = args.output, wName = args.weight.split(".")[1];
      const x = vec(T[input], i), W = weight(args.weight, 0), b = args.bias ? vec(P[args.bias]) : null, got = linear(x, W, b);
      const bName = b ? args.bias.split(".")[1] : null;
      const rows = [{ label: input + " · " + wName, values: got.product, family: familyOf(output), operands: function (c) { return dotOperands(x, W, null, c, input, wName, null, got.product[c]); } }];
      if (b) rows.push({ label: bName, values: b, param: args.bias, at: [] });
      rows.push({ label: output, values: vec(T[output], i), field: output, at: [i], role: args.role, result: true,
                  operands: function (c) { return b ? fmt(got.product[c]) + " + " + fmt(b[c]) + eq(sv(got.product[c]) + sv(b[c]), got.values[c]) + fmt(got.values[c]) : dotOperands(x, W, null, c, input, wName, null, got.values[c]); } });
      const body = [
        rowTable("input: " + input + " of token " + tokenLabel(i), input, 0, [{ label: input, values: x, field: input, at: [i], role: args.role === "output" ? "output" : null }], box),
        rowTable(args.what + " (" + x.length + " → " + W.width + " entries)", output, 0, rows, box),
      ];
      const note = cutNote(W, wName);
      if (note) body.push(note);
      body.push(termsDetails("Terms of " + input + " · " + wName, function () {
        return termSpec("each row is one term; the column sums are " + input + " · " + wName, cols(prefixOf(output), W.width), W, shownOf(output, 0), projectionTerms(x, W, input, wName, familyOf(output)));
      }, box, x.length));
      return { body: body, checks: [[carried(got.values, W), carried(vec(T[output], i), W), carried(got.scale, W)]] };
    },
    activation: function (i, h, box, args) {
      const pre = vec(T[args.input], i), got = pre.map(ACTIVATE);
      return {
        body: [rowTable(C.activation_name + " applied to each entry", args.output, 0, [
          { label: args.input, values: pre, field: args.input, at: [i], role: "ffn" },
          { label: args.output + " = " + C.activation_name + "(" + args.input + ")", values: vec(T[args.output], i), field: args.output, at: [i], role: "ffn", result: true, operands: function (c) { return C.activation_name + "(" + fmt(pre[c]) + ")" + eq(ACTIVATE(sv(pre[c])), got[c]) + fmt(got[c]); } },
        ], box), activationCurve(pre, args.input)],
        checks: [[got, vec(T[args.output], i)]],
      };
    },
    product: function (i, h, box, args) {
      const a = vec(T[args.a], i), b = vec(T[args.b], i), got = a.map(function (v, c) { return v * b[c]; });
      return {
        body: [textEl("p", "The gate decides, entry by entry, how much of each up value passes: near 0 where " + C.activation_name + "(gate) is near 0.", "note"),
               rowTable("entry by entry: the activated gate times the up values", args.out, 0, [
          { label: args.a, values: a, field: args.a, at: [i], role: "ffn" },
          { label: "⊙ " + args.b, values: b, field: args.b, at: [i], role: "ffn" },
          { label: args.out + " = " + args.a + " ⊙ " + args.b, values: vec(T[args.out], i), field: args.out, at: [i], role: "ffn", result: true, operands: function (c) { return fmt(a[c]) + " × " + fmt(b[c]) + eq(sv(a[c]) * sv(b[c]), got[c]) + fmt(got[c]); } },
        ], box)],
        checks: [[got, vec(T[args.out], i)]],
      };
    },
    residual: function (i, h, box, args) { return residualStep(i, box, args.a, args.b, args.out, args.role); },
    unembed: function (i, h, box) {
      // The logit first (what the step makes; on a phone the products scroll after it), then its D products.
      const x = vec(T.ln_f, i), W = weight("W_U", 0), got = linear(x, W, null), logits = vec(T.logits, i);
      const order = ranked(logits), shown = state.allWords ? order : order.slice(0, WORD_ROWS);
      const rows = [{ label: "ln_f of " + tokenLabel(i), values: [null].concat(x), field: "ln_f", at: [i], fieldColumns: [null].concat(range(D).map(function (c) { return [c]; })), role: "residual" }];
      shown.forEach(function (w) {
        const terms = x.map(function (v, c) { return v * W.get(c, w); });
        rows.push({ label: wordName(w), values: [logits[w]].concat(terms), family: familyOf("logits"),
                    field: "logits", at: [i], fieldColumns: [[w]].concat(terms.map(function () { return null; })),
                    operands: function (c) { return c > 0 ? fmt(x[c - 1]) + " × " + fmt(W.get(c - 1, w)) + eq(sv(x[c - 1]) * sv(W.get(c - 1, w)), terms[c - 1]) + fmt(terms[c - 1]) : dotOperands(x, W, null, w, "ln_f", "W_U", null, got.values[w]); } });
      });
      const elided = shownOf("ln_f", 0);
      const table = numTable({ caption: "token " + tokenLabel(i) + ": one row per vocabulary word, largest logit first; each row the word's logit, the sum of the " + D + " products ln_f_c × W_U[c, word] after it",
                               columns: ["logit ="].concat(cols("d", D)), show: elided ? [0].concat(elided.map(function (c) { return c + 1; })) : null, resultColumn: 0, rows: rows, switch: wordsSwitch(shown.length) }, box);
      return {
        body: [textEl("p", "W_U is the model's own " + D + " × " + V + " matrix, one column per word (it does not reuse the embedding table W_E), and there is no bias: a word's logit is large when ln_f points the way the word's column does.", "note"), table],
        checks: [[got.values, logits, got.scale]],
      };
    },
    prediction: function (i, h, box) {
      // Shown: the record's logits and probs; the page recomputes the softmax to check them.
      const logits = vec(T.logits, i), probs = vec(T.probs, i), soft = MATH.softmaxRow(logits);
      const max = soft.max, exps = soft.exps, sum = soft.sum, got = soft.weights;
      const p = predictionTerms(probs), shown = state.allWords ? p.order : p.order.slice(0, WORD_ROWS);
      const guess = el("p", { class: "prediction" }, textEl("span", "After " + quoted(TOKENS[i]) + ", the block predicts "),
        p.top.map(function (w, k) { return el("span", null, el("b", { text: quoted(wordName(w)) }), textEl("span", " " + fmt(probs[w]) + (k < p.top.length - 1 ? ", " : ", …"))); }));
      const wordRows = p.top.map(function (w) { return { label: wordName(w), cells: [{ value: probs[w], field: "probs", at: [i, w] }] }; });
      wordRows.push({ label: OTHERS + " (" + wordsCounted(p.rest) + ")", cells: [{ value: p.others, family: S.weights_family,
        operands: function () { return "the other " + wordsCounted(p.rest) + ": " + sumText(p.rest.map(function (w) { return probs[w]; })) + eq(sumShown(p.rest.map(function (w) { return probs[w]; })), p.others) + fmt(p.others); } }] });
      wordRows.push({ label: p.sign + " total", result: true, cells: [{ value: p.total, family: S.weights_family,
        operands: function () { return sumText(probs) + eq(sumShown(probs), p.total) + fmt(p.total) + "  (all " + wordsCounted(range(V)) + ")"; } }] });
      const terms = numTable({
        caption: "the next word after token " + tokenLabel(i) + ": the " + TOP_WORDS + " most probable words, then the other " + wordsCounted(p.rest) + " summed",
        columns: ["p"], rows: wordRows,
      }, box);
      const written = el("p", { class: "sumline" }, textEl("span", p.values.map(fmt).join(" + ") + " " + p.sign + " " + fmt(p.total)),
        p.sign === "=" ? null : textEl("span", "  (each term is rounded on its own: as written they add up to " + fmt(p.written) + ")", "note"));
      const rows = shown.map(function (w) {
        return { label: wordName(w), cells: [
          { value: logits[w], field: "logits", at: [i, w] },
          { value: logits[w] - max, family: familyOf("logits"), operands: function () { return fmt(logits[w]) + " − " + fmt(max) + eq(sv(logits[w]) - sv(max), logits[w] - max) + fmt(logits[w] - max); } },
          { value: exps[w], family: "exp_scores" in DATA.families ? "exp_scores" : S.weights_family, operands: function () { return "exp(" + fmt(logits[w] - max) + ")" + eq(Math.exp(sv(logits[w] - max)), exps[w]) + fmt(exps[w]); } },
          { value: probs[w], field: "probs", at: [i, w], operands: function () { return fmt(exps[w]) + " / " + fmt(sum) + eq(sv(exps[w]) / sv(sum), got[w]) + fmt(got[w]); } }] };
      });
      rows.push({ label: "Σ (all " + V + ")", result: true, sums: true, cells: [null, null,
        { value: sum, family: "exp_sums" in DATA.families ? "exp_sums" : S.weights_family, operands: function () { return sumText(exps) + eq(sumShown(exps), sum) + fmt(sum); } },
        { value: p.total, family: S.weights_family, operands: function () { return sumText(probs) + eq(sumShown(probs), p.total) + fmt(p.total); } }] });
      const softmax = numTable({
        caption: "the softmax of the logits of token " + tokenLabel(i) + ", one row per word, most probable first (max = the largest logit, " + fmt(max) + ")",
        columns: ["logit", "− max", "exp", "÷ Σ = p"], resultColumn: 3, rows: rows, switch: wordsSwitch(shown.length),
      }, box);
      return { body: [guess, terms, written, softmax], checks: [[got, probs], [p.total, 1]] };
    },
    output: function (i, h, box, args) {
      const field = args.field;
      const rows = range(N).map(function (j) {
        return { label: tokenLabel(j), values: vec(T[field], j), field: field, at: [j], role: "residual", result: j === i };
      });
      const got = [], want = [];
      if (field === "resid_post") {
        range(N).forEach(function (j) { got.push.apply(got, add(vec(T.resid_mid, j), vec(T.ffn_out, j))); want.push.apply(want, vec(T.resid_post, j)); });
      } else { // post-norm: each row is LayerNorm 2 of resid_post, recomputed for every token
        range(N).forEach(function (j) {
          const x = vec(T.resid_post, j), mean = x.reduce(function (s, v) { return s + v; }, 0) / D;
          const variance = x.reduce(function (s, v) { return s + (v - mean) * (v - mean); }, 0) / D, root = Math.sqrt(variance + C.ln_eps);
          const gamma = vec(P["ln2.weight"]), beta = vec(P["ln2.bias"]);
          got.push.apply(got, x.map(function (v, c) { return gamma[c] * (v - mean) / root + beta[c]; }));
          want.push.apply(want, vec(T[field], j));
        });
      }
      return {
        body: [textEl("p", "One row per token, " + D + " numbers each: the same shape as the block's input. Row " + tokenLabel(i) + " is the selected token's.", "note"),
               rowTable((field === "resid_post" ? "y" : field) + ", the block's output", field, 0, rows, box)],
        checks: [[got, want]],
      };
    },
  };

  function activationCurve(points, inputName) {
    const width = 320, height = 150, pad = 24;
    const span = Math.max(3, maxAbs(points) * 1.1);
    const lo = -span, hi = span;
    const ys = range(121).map(function (k) { return ACTIVATE(lo + (hi - lo) * k / 120); });
    const yLo = Math.min(-0.5, Math.min.apply(null, ys)), yHi = Math.max.apply(null, ys);
    const X = function (x) { return pad + (x - lo) / (hi - lo) * (width - 2 * pad); };
    const Y = function (y) { return height - pad - (y - yLo) / (yHi - yLo) * (height - 2 * pad); };
    const svg = svgEl("svg", { class: "curve", viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img", "aria-label": C.activation_name + " curve with this token's " + F + " entries marked" });
    svg.appendChild(svgEl("line", { class: "axis", x1: pad, x2: width - pad, y1: Y(0), y2: Y(0) }));
    svg.appendChild(svgEl("line", { class: "axis", x1: X(0), x2: X(0), y1: pad / 2, y2: height - pad }));
    svg.appendChild(svgEl("polyline", { class: "line", points: ys.map(function (y, k) { return X(lo + (hi - lo) * k / 120).toFixed(1) + "," + Y(y).toFixed(1); }).join(" ") }));
    points.forEach(function (x) { svg.appendChild(svgEl("circle", { class: "dot", cx: X(x).toFixed(1), cy: Y(ACTIVATE(x)).toFixed(1), r: 3 })); });
    svg.appendChild(svgEl("text", { x: width - pad, y: Y(0) - 4, "text-anchor": "end", text: inputName }));
    svg.appendChild(svgEl("text", { x: X(0) + 4, y: pad / 2 + 10, text: C.activation_name }));
    return el("figure", { class: "curvebox" }, svg, textEl("figcaption", "The curve of " + C.activation_name + "; the dots are this token's entries.", "note"));
  }

  /* ---------- the overview: every layer's and head's weights row of the token (BertViz's model view) ---------- */

  /* DATA.overview (blockviz.explorer.overview): weights (layers, heads, n, n) — the record's one block, or every
     layer of a model with the recorded layer's rows the record's own — and maybe a contrast sentence's. */
  const STACK = LIVE && LIVE.stack; // a workbench of several blocks: its overview is every block, computed in the page
  const OV = STACK ? stackOverview() : DATA.overview, UNIT = STACK ? "block" : "layer";
  const OV_OTHERS = OV.othersT || (OV.others ? loadFloat32(OV.others) : null), LAYERS = OV.layers, RECORDED = OV.recorded, L = LAYERS.length;
  function stackOverview() { // the weights of the blocks not shown, (blocks − 1, heads, n, n), beside the shown block's own
    const others = STACK.views.filter(function (_, k) { return k !== STACK.block; }), size = H * N * N, data = new Float64Array(others.length * size);
    others.forEach(function (view, k) { data.set(view.weights.data, k * size); });
    return { layers: range(STACK.views.length), recorded: STACK.block, othersT: { shape: [others.length, H, N, N], data: data, offset: 0 }, contrast: null };
  }
  const CON = OV.contrast, CON_W = CON ? loadFloat32(CON.weights) : null, CON_N = CON ? CON.tokens.length : 0;
  const OV_TOP = 5; // a cell's accessible label names its largest weights, this many
  let overviewFocus = null; // [layer index, head] of the cell to focus once the grid is drawn again

  /* The contrast sentence's token for token i: the same word (its k-th occurrence), else the same position when
     both sentences have as many tokens; −1 when there is none. */
  function contrastQuery(i) {
    const word = TOKENS[i].toLowerCase();
    const k = range(i + 1).filter(function (j) { return TOKENS[j].toLowerCase() === word; }).length;
    const same = range(CON_N).filter(function (j) { return CON.tokens[j].toLowerCase() === word; });
    if (same.length >= k) return same[k - 1];
    return CON_N === N ? i : -1;
  }
  /* A causal query before the first token where the sentences differ cannot see the difference: one line says so. */
  function unseenDifference(i, q) {
    if (!C.causal || q < 0 || q !== i) return null;
    let first = 0;
    while (first < Math.min(N, CON_N) && TOKENS[first] === CON.tokens[first]) first++;
    if (first === N && first === CON_N) return null;
    if (i >= first) return null;
    return "The mask is causal: " + quoted(TOKENS[i]) + " sees only the tokens up to itself, and the sentences differ only from token " + first + " " +
      quoted(first < N ? TOKENS[first] : CON.tokens[first]) + " on, so its weights are the same in both: nothing here can show the difference.";
  }
  function ovRow(t, l, h, q, n) { return range(n).map(function (j) { return at(t, l, h, q, j); }); }
  function myRow(l, h, q) { // the recorded layer's row is the record's own weights
    return l === RECORDED ? vec(T.weights, h, q) : ovRow(OV_OTHERS, l < RECORDED ? l : l - 1, h, q, N);
  }
  function ovBlocked(q, n, theirs) { return range(n).map(function (j) { return theirs ? !!C.causal && j > q : at(T.mask, q, j) === -Infinity; }); }
  function largestFirst(row) { return range(row.length).sort(function (a, b) { return row[b] - row[a] || a - b; }); }
  function readable(words, row, count) {
    return largestFirst(row).slice(0, count).map(function (j) { return words[j] + " " + fmt(row[j]); }).join(", ");
  }

  /* One sentence's row in a grid cell: a strip of one square per key, and the key it weighs most. */
  function strip(words, row, q, n, which) {
    const blocked = ovBlocked(q, n, which === "theirs"), top = largestFirst(row)[0];
    const squares = el("span", { class: "strip", "aria-hidden": "true" });
    range(n).forEach(function (j) {
      const square = el("span", { class: "sq", title: words[q] + " \u2192 " + words[j] + ": " + (blocked[j] ? S.blocked_weight_label + " (blocked)" : fmt(row[j])) });
      paint(square, row[j], S.weights_family, blocked[j]);
      squares.appendChild(square);
    });
    return el("span", { class: "ovrow " + which }, squares,
      el("span", { class: "ovtop" }, textEl("span", words[top], "ovword"), document.createTextNode(" "), textEl("span", fmt(row[top]), "ovnum")));
  }

  /* The numbers of one cell under the grid: the token's weight on every key, one row per key (it fits a phone),
     a table per sentence side by side. */
  function readoutTable(caption, words, row, q, n, attrs, theirs) {
    const blocked = ovBlocked(q, n, theirs), body = el("tbody");
    range(n).forEach(function (j) {
      const td = el("td", { class: "num", text: blocked[j] ? S.blocked_weight_label : fmt(row[j]) });
      const extra = attrs(j);
      Object.keys(extra).forEach(function (key) { td.setAttribute(key, extra[key]); });
      paint(td, row[j], S.weights_family, blocked[j]);
      body.appendChild(el("tr", { class: blocked[j] ? "blocked" : null }, el("th", { scope: "row", class: "rowhead", text: (blocked[j] ? "\u2715 " : "") + j + " " + words[j] }), td));
    });
    const head = el("tr", null, el("th", { scope: "col", text: "key" }), el("th", { scope: "col", text: "weight" }));
    return el("div", { class: "tablebox" }, textEl("p", caption, "tablecap"),
      el("div", { class: "scroll", "data-label": caption }, el("table", { class: "nums", "aria-label": caption }, el("thead", null, head), body)));
  }
  function showReadout(readout, l, h) {
    const i = state.token, layer = LAYERS[l], recorded = l === RECORDED;
    readout.textContent = "";
    const what = (L > 1 ? UNIT + " " + layer + ", " : "") + "head " + h;
    readout.appendChild(textEl("h3", what + ": the weights of " + quoted(TOKENS[i]) + " on every key" + (recorded && L > 1 ? " (the " + (STACK ? "block shown" : "recorded layer") + ": its steps are below)" : "")));
    const mine = myRow(l, h, i), tables = el("div", { class: "readtables" });
    readout.appendChild(tables);
    tables.appendChild(readoutTable((CON ? "\u201c" + DATA.sentence + "\u201d: " : "") + "query " + tokenLabel(i), TOKENS, mine, i, N, function (j) {
      return recorded ? { "data-field": "weights", "data-at": [h, i, j].join(",") } : { "data-overview": [l, h, i, j].join(",") };
    }));
    if (CON) {
      const q = contrastQuery(i);
      if (q < 0) readout.appendChild(textEl("p", "The contrast sentence has no token " + quoted(TOKENS[i]) + " (nor as many tokens, to match by position).", "note"));
      else tables.appendChild(readoutTable("\u201c" + CON.sentence + "\u201d: query " + q + " " + CON.tokens[q], CON.tokens, ovRow(CON_W, l, h, q, CON_N), q, CON_N, function (j) {
        return { "data-contrast": [l, h, q, j].join(",") };
      }, true));
    }
    if (!recorded && STACK) readout.appendChild(textEl("p", "Block " + layer + "'s weights, computed in the page; the steps below are block " + LAYERS[RECORDED] + "'s. Click the cell (or Enter) to show block " + layer + "'s steps.", "note"));
    else if (!recorded) readout.appendChild(textEl("p", "Layer " + layer + "'s weights are the model's own (output_attentions); the steps of this page are layer " + LAYERS[RECORDED] +
      "'s. For layer " + layer + "'s calculation, write its page: blockviz explore \u2026 --layer " + layer + ".", "note"));
    markScrollers();
  }

  function overviewSection() {
    const i = state.token, q = CON ? contrastQuery(i) : -1;
    const section = el("section", { class: "step overview", id: "step-" + OVERVIEW, "data-step": OVERVIEW, "aria-labelledby": "title-" + OVERVIEW },
      el("h2", { id: "title-" + OVERVIEW, tabindex: "-1", text: (L > 1 ? "Every " + UNIT + " and head" : "Every head") + ": the weights of " + quoted(TOKENS[i]) }));
    const model = STACK ? "Rows are the " + L + " blocks, columns the " + H + " heads. The steps of this page are block " + LAYERS[RECORDED] + "'s (marked \u25b8). " : L > 1 ? "Rows are the " + L + " layers, columns the " + H + " heads. The steps of this page are layer " + LAYERS[RECORDED] +
      "'s (the recorded layer, marked \u25b8; its rows are the record's); the other layers' weights are the model's own (output_attentions). " : "";
    section.appendChild(textEl("p", model + "Each cell is the weights row of token " + tokenLabel(i) + " in one head: a square per key, coloured by its weight (0 to 1), " +
      "and the key it weighs most. Hover or focus a cell for its numbers; click it (or Enter) to follow that head step by step" + (L > 1 && !STACK ? " (in the recorded layer)." : "."), "note"));
    if (CON) {
      section.appendChild(textEl("p", "Contrast: each cell's upper strip is \u201c" + DATA.sentence + "\u201d, the lower (dashed) \u201c" + CON.sentence + "\u201d, query " +
        (q < 0 ? "\u2014 no token " + quoted(TOKENS[i]) + " there" : q + " " + quoted(CON.tokens[q]) + (CON.tokens[q].toLowerCase() === TOKENS[i].toLowerCase() ? " (the same word)" : " (the same position)")) + ".", "note"));
      const blind = unseenDifference(i, q);
      if (blind) section.appendChild(textEl("p", blind, "note causalnote"));
    }
    const readout = el("div", { class: "readout", "aria-live": "polite" });
    const table = el("table", { class: "ovgrid", "aria-label": "Weights of " + TOKENS[i] + " in every " + (L > 1 ? UNIT + " and " : "") + "head" });
    const head = el("tr", null, el("td", { class: "corner" }));
    range(H).forEach(function (h) { head.appendChild(el("th", { scope: "col", text: "head " + h, class: h === state.head ? "current" : null })); });
    table.appendChild(el("thead", null, head));
    const body = el("tbody"), buttons = [];
    range(L).forEach(function (l) {
      const tr = el("tr", { class: l === RECORDED ? "recorded" : null });
      tr.appendChild(el("th", { scope: "row", text: (l === RECORDED && L > 1 ? "\u25b8 " : "") + (L > 1 ? UNIT + " " + LAYERS[l] : "block") }));
      buttons.push([]);
      range(H).forEach(function (h) {
        const mine = myRow(l, h, i);
        const visible = [TOKENS[largestFirst(mine)[0]] + " " + fmt(mine[largestFirst(mine)[0]])];
        if (CON && q >= 0) { const row = ovRow(CON_W, l, h, q, CON_N), top = largestFirst(row)[0]; visible.push(CON.tokens[top] + " " + fmt(row[top])); }
        // The name starts with the cell's visible text (the largest weight of each sentence), then says where it is and the others.
        const label = visible.join(" ") + ". " + (L > 1 ? UNIT + " " + LAYERS[l] + " " : "") + "head " + h + ": " + TOKENS[i] + " \u2192 " + readable(TOKENS, mine, OV_TOP) +
          (CON ? (q < 0 ? "; the contrast sentence has no such token" : "; contrast, " + CON.tokens[q] + " \u2192 " + readable(CON.tokens, ovRow(CON_W, l, h, q, CON_N), OV_TOP)) : "") +
          (l === RECORDED || STACK ? ". Press Enter for its steps" : "");
        const current = l === RECORDED && h === state.head;
        const button = el("button", { type: "button", class: current ? "ovcell current" : "ovcell", "data-layer": l, "data-head": h, "aria-label": label, "aria-pressed": l === RECORDED ? String(h === state.head) : null },
          strip(TOKENS, mine, i, N, "mine"), document.createTextNode(" "), CON && q >= 0 ? strip(CON.tokens, ovRow(CON_W, l, h, q, CON_N), q, CON_N, "theirs") : null);
        button.tabIndex = current ? 0 : -1;
        const show = function () { showReadout(readout, l, h); };
        button.addEventListener("mouseenter", show);
        button.addEventListener("focus", show);
        button.addEventListener("click", function () {
          overviewFocus = [l, h];
          if (STACK && l !== RECORDED) { // that block's page, on this head
            STACK.choose(l, h, false);
            const again = document.querySelector('.ovcell[data-layer="' + l + '"][data-head="' + h + '"]');
            if (again) again.focus();
            return;
          }
          if (l === RECORDED) { // the calculation of this row: its softmax step
            state.head = h; state.step = STEP_NAMES.indexOf("softmax") >= 0 ? "softmax" : STEP_NAMES[0]; update(); bringIntoView();
            document.getElementById("title-" + state.step).focus({ preventScroll: true });
            return;
          }
          show();
        });
        button.addEventListener("keydown", function (event) {
          const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
          if (!(event.key in moves)) return;
          event.preventDefault();
          const ll = Math.min(L - 1, Math.max(0, l + moves[event.key][0])), hh = Math.min(H - 1, Math.max(0, h + moves[event.key][1]));
          button.tabIndex = -1;
          buttons[ll][hh].tabIndex = 0;
          buttons[ll][hh].focus();
        });
        buttons[l].push(button);
        tr.appendChild(el("td", null, button));
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    table.style.setProperty("--n", String(Math.max(N, CON_N)));
    // The cells share the width of the steps' column (few heads: wider cells, larger squares); past the narrowest, the grid scrolls.
    const room = (stepsBox.clientWidth || 900) - 28 - (L > 1 ? 80 : 56);
    table.style.setProperty("--cellw", Math.min(192, Math.max(60, room / H - 5)).toFixed(1) + "px");
    section.appendChild(el("div", { class: "scroll", "data-label": "Every head's weights" }, table));
    section.appendChild(readout);
    showReadout(readout, RECORDED, state.head);
    const next = el("button", { type: "button", text: "step by step \u2192" });
    next.addEventListener("click", function () { chooseStep(1, false); bringIntoView(); });
    section.appendChild(el("div", { class: "stepfoot" }, next));
    if (overviewFocus) {
      const target = buttons[overviewFocus[0]][overviewFocus[1]];
      overviewFocus = null;
      setTimeout(function () { if (state.step === OVERVIEW) target.focus(); }, 0);
    }
    return section;
  }

  /* ---------- token names for links (blockviz.selection's rule) ---------- */

  function selectToken(choice) { // position or −1
    if (/^\s*\d+\s*$/.test(choice)) { const p = parseInt(choice, 10); return p < N ? p : -1; }
    const occurrence = /^([\s\S]+)#(-?\d+)$/.exec(choice);
    if (occurrence && TOKENS.indexOf(choice) < 0) return nth(occurrence[1], parseInt(occurrence[2], 10));
    return nth(choice, 1);
  }
  function nth(word, k) { // the k-th occurrence ignoring case, as select_token
    if (k < 1) return -1;
    const folded = word.toLowerCase();
    const positions = range(N).filter(function (j) { return TOKENS[j].toLowerCase() === folded; });
    return k <= positions.length ? positions[k - 1] : -1;
  }
  function tokenName(i) {
    const word = TOKENS[i];
    if (selectToken(word) === i) return word;
    const k = range(i + 1).filter(function (j) { return TOKENS[j].toLowerCase() === word.toLowerCase(); }).length;
    if (selectToken(word + "#" + k) === i) return word + "#" + k;
    return String(i);
  }

  /* ---------- state, hash, rendering ---------- */

  const state = { token: DATA.initial.token, head: DATA.initial.head, step: DATA.initial.step, theme: DATA.initial.theme, all: false, patternNumbers: false, allColumns: false, allWords: false,
                  param: "attn.W_Q", paramHead: 0 };
  if (LIVE) { if (LIVE.state) Object.assign(state, LIVE.state, { token: DATA.initial.token }); LIVE.state = state; }

  function readHash() {
    const text = location.hash.replace(/^#/, "");
    if (!text) return;
    text.split("&").forEach(function (part) {
      const eq = part.indexOf("=");
      if (eq < 0) return;
      let key, value;
      try { key = decodeURIComponent(part.slice(0, eq)); value = decodeURIComponent(part.slice(eq + 1)); } catch (error) { return; }
      if (key === "token") { const p = selectToken(value); if (p >= 0) state.token = p; }
      else if (key === "head" && /^\d+$/.test(value) && parseInt(value, 10) < H) state.head = parseInt(value, 10);
      else if (key === "step" && VIEW_NAMES.indexOf(value) >= 0) state.step = value;
      else if (key === "theme" && S.themes[value]) state.theme = value;
    });
  }
  function hashText() {
    return "#token=" + encodeURIComponent(tokenName(state.token)) + "&head=" + state.head + "&step=" + state.step + (LIVE ? LIVE.hash() : "");
  }
  function writeHash() {
    const text = hashText();
    if (location.hash === text) return;
    try { history.replaceState(null, "", text); } catch (error) { // a sandboxed srcdoc iframe
      try { location.hash = text; } catch (ignored) { /* no URL to keep the view in */ }
    }
  }

  /* On paper the page is always the light theme (its colours are the ones made for a white page). */
  const PRINT = window.matchMedia ? window.matchMedia("print") : null;
  function applyTheme() {
    const shown = PRINT && PRINT.matches ? "light" : state.theme;
    const t = S.themes[shown], root = document.documentElement;
    root.setAttribute("data-theme", shown);
    const vars = { "--bg": t.background, "--text": t.text, "--muted": t.muted_text, "--grid": t.grid, "--blocked": t.blocked, "--blocked-text": t.blocked_text,
                   "--q": t.roles.query, "--k": t.roles.key, "--v": t.roles.value, "--o": t.roles.output, "--r": t.roles.residual, "--f": t.roles.ffn };
    Object.keys(vars).forEach(function (k) { root.style.setProperty(k, vars[k]); });
    root.style.setProperty("color-scheme", shown);
    themeButton.textContent = state.theme === "dark" ? "Light theme" : "Dark theme";
  }

  /* roving focus: one tab stop per group, arrows move the selection */
  function rovingKeys(event, count, current, choose) {
    const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 };
    let next = null;
    if (event.key in moves) next = (current + moves[event.key] + count) % count;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = count - 1;
    if (next === null) return;
    event.preventDefault();
    choose(next, true);
  }

  const app = document.getElementById("app");
  const themeButton = document.getElementById("theme-toggle");
  themeButton.hidden = false;
  on(themeButton, "click", function () { state.theme = state.theme === "dark" ? "light" : "dark"; applyTheme(); });

  const tokenBar = el("div", { class: "bar tokens", role: "radiogroup", "aria-label": "Token" }, textEl("span", "Token", "label"));
  const chips = TOKENS.map(function (token, j) {
    const special = !!SPECIAL[j], unknown = LIVE && LIVE.ids[j] === 0;
    const chip = el("button", { type: "button", class: special ? "chip special" : unknown ? "chip unknown" : "chip", role: "radio", "data-token": j, "aria-label": "token " + j + ": " + token + (special ? " (special token)" : unknown ? " (not in the vocabulary: read as " + DATA.workbench.unknown + ")" : ""),
                                title: special ? "a special token the model's tokenizer adds" : null },
                    textEl("span", String(j), "pos"), textEl("span", token, "word"));
    chip.addEventListener("click", function () { chooseToken(j, false); });
    chip.addEventListener("keydown", function (event) { rovingKeys(event, N, state.token, chooseToken); });
    tokenBar.appendChild(chip);
    return chip;
  });
  if (SPECIAL.some(Boolean)) tokenBar.appendChild(textEl("span", "dashed: special tokens the tokenizer adds", "hint"));
  if (LIVE && LIVE.ids.indexOf(0) >= 0) tokenBar.appendChild(textEl("span", "dotted: not in the vocabulary, read as " + DATA.workbench.unknown, "hint"));
  tokenBar.appendChild(textEl("span", "\u2190 \u2192 keys: previous, next token", "hint"));
  /* ← and → choose the token from anywhere on the page, not only from a chip; controls that use
     the arrows themselves (the heads, the steps, a scrolled table, a text field) keep them. */
  on(document, "keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const target = event.target;
    if (target && target.closest && target.closest("input:not([type=checkbox]), textarea, select, [contenteditable], [role=radiogroup], .stepnav, .scroll[tabindex]")) return;
    event.preventDefault();
    chooseToken((state.token + (event.key === "ArrowRight" ? 1 : N - 1)) % N, false);
  });
  const headBar = el("div", { class: "bar heads", role: "radiogroup", "aria-label": "Head" }, textEl("span", "Head", "label"));
  const headButtons = range(H).map(function (g) {
    const button = el("button", { type: "button", class: "head", role: "radio", "data-head": g, text: "head " + g });
    button.addEventListener("click", function () { chooseHead(g, false); });
    button.addEventListener("keydown", function (event) { rovingKeys(event, H, state.head, chooseHead); });
    headBar.appendChild(button);
    return button;
  });
  const allBox = el("input", { type: "checkbox", id: "all-steps" });
  allBox.addEventListener("change", function () { state.all = allBox.checked; layout.classList.toggle("all-steps", state.all); markScrollers(); });
  headBar.appendChild(el("label", { class: "allsteps", for: "all-steps" }, allBox, textEl("span", " show all steps")));

  const stepList = el("ol");
  const VIEWS = [{ name: OVERVIEW, title: L > 1 ? "Overview: every " + UNIT + " and head" : "Overview: every head" }].concat(DATA.steps);
  const stepButtons = VIEWS.map(function (step, k) {
    const button = el("button", { type: "button", "data-step": step.name }, textEl("span", k === 0 ? "\u25a6" : k + ".", "num"), textEl("span", step.title));
    button.addEventListener("click", function () { chooseStep(k, false); bringIntoView(); }); // a tap on a phone: the step is below the list
    button.addEventListener("keydown", function (event) { rovingKeys(event, VIEW_NAMES.length, VIEW_NAMES.indexOf(state.step), chooseStep); });
    stepList.appendChild(el("li", null, button));
    return button;
  });
  const stepNav = el("nav", { class: "stepnav", "aria-label": "Steps" }, stepList);
  const stepsBox = el("div", { class: "steps" });
  const patternBox = el("aside", { class: "pattern", "aria-label": "Attention pattern" });
  const layout = el("div", { class: "layout" }, stepNav, stepsBox, patternBox);
  if (!QUICK) {
    app.textContent = "";
    app.appendChild(tokenBar); app.appendChild(headBar);
    const legend = clippedLegend();
    if (legend) app.appendChild(legend);
    app.appendChild(legends());
  }
  const STATIC_WHY = SOURCE.is_model ? "this model's weights (hundreds of MB) are not in it" : // blockviz.explorer.payload.is_workbench
    SOURCE.kind === "seeded" ? "the seeded block embeds a word with torch's random generator seeded by a hash of the word, which the page cannot reproduce" : null;
  if (STATIC_WHY && !QUICK) app.appendChild(textEl("p", "A static page: " + STATIC_WHY + ", so it shows this sentence only; the toy model's page (--model toy) runs its model and takes any sentence and edit.", "note staticnote"));
  if (!QUICK) app.appendChild(layout);
  const stackBox = el("section", { class: "step stackview", id: "stack-view", "aria-labelledby": "stack-title" });
  if (STACK && !QUICK) app.insertBefore(stackBox, layout);
  const paramsBox = el("section", { class: "step wb-params", id: "wb-params", "aria-labelledby": "wb-params-title" });
  if (LIVE && !QUICK) app.appendChild(paramsBox);

  /* The workbench's Parameters table: any of the model's parameter tables (a 3-D one a head at a time); click a
     number (or Enter on it) to type a new value. */
  function renderParams() {
    if (!LIVE) return;
    paramsBox.textContent = "";
    const box = { operands: el("p", { class: "operands", hidden: true, "aria-live": "polite" }), copied: el("textarea", { class: "copied", readonly: true, rows: 4, hidden: true, "aria-label": "Copied table" }), copyNote: el("p", { class: "note", "aria-live": "polite" }) };
    const pick = el("select", { id: "wb-param" });
    Object.keys(P).forEach(function (name) { pick.appendChild(el("option", { value: name, text: name + " (" + P[name].shape.join(" \u00d7 ") + ")" })); });
    pick.value = state.param in P ? state.param : "attn.W_Q";
    pick.addEventListener("change", function () { state.param = pick.value; state.paramHead = 0; renderParams(); document.getElementById("wb-param").focus(); });
    const t = P[pick.value], name = pick.value, three = t.shape.length === 3;
    const controls = el("p", { class: "wb-row" }, el("label", { for: "wb-param", class: "label", text: "Parameter" }), pick);
    let view = t, lead = [];
    if (three) {
      const headPick = el("select", { id: "wb-param-head", "aria-label": "Head of " + name });
      range(t.shape[0]).forEach(function (g) { headPick.appendChild(el("option", { value: g, text: "head " + g })); });
      headPick.value = String(Math.min(state.paramHead, t.shape[0] - 1));
      headPick.addEventListener("change", function () { state.paramHead = parseInt(headPick.value, 10); renderParams(); document.getElementById("wb-param-head").focus(); });
      controls.appendChild(headPick);
      lead = [parseInt(headPick.value, 10)];
      view = sub(t, lead[0]);
    }
    const rowsOf = view.shape.length === 1 ? 1 : view.shape[0], width = view.shape[view.shape.length - 1];
    const rowLabel = function (r) { return name === "W_E" ? VOCABULARY[r] : name === "W_pos" ? "position " + r : view.shape.length === 1 ? name : (t.shape.length === 2 && t.shape[0] === H && name.indexOf(".b_") > 0 ? "head " + r : "row " + r); };
    const columns = name === "W_U" ? VOCABULARY.slice() : cols(width === F ? "f" : "d", width);
    const rows = range(rowsOf).map(function (r) {
      return { label: rowLabel(r), values: view.shape.length === 1 ? vec(view) : vec(view, r), param: name, at: view.shape.length === 1 ? lead : lead.concat([r]), family: DATA.param_families[name] };
    });
    paramsBox.appendChild(el("h2", { id: "wb-params-title", text: "Parameters: click a number to type a new value, drag it sideways, or Alt+\u2191 / Alt+\u2193 on it" }));
    paramsBox.appendChild(controls);
    paramsBox.appendChild(numTable({ caption: name + (three ? " of head " + lead[0] : "") + ", " + view.shape.join(" \u00d7 ") + " (edited cells outlined; their trained value in their title)", columns: columns, rows: rows }, box));
    paramsBox.appendChild(box.operands); paramsBox.appendChild(box.copied); paramsBox.appendChild(box.copyNote);
    markScrollers();
  }

  /* A stack's residual stream followed across its blocks, for the selected token: each block adds its attention
     and its FFN to the row it was handed and hands the sum to the next; and the prediction the stream makes after
     each block (its output through the final LayerNorm and W_U: the logit lens; after the last, the model's). */
  function renderStack() {
    if (!STACK) return;
    stackBox.textContent = "";
    const i = state.token, views = STACK.views, family = familyOf("resid_pre"), box = { operands: el("p", { class: "operands", hidden: true, "aria-live": "polite" }), copied: el("textarea", { class: "copied", readonly: true, rows: 4, hidden: true, "aria-label": "Copied table" }), copyNote: el("p", { class: "note", "aria-live": "polite" }) };
    const mark = function (k) { return k === STACK.block ? "\u25b8 " : ""; };
    const rows = [{ label: "embed + pos_embed", values: vec(views[0].resid_pre, i), family: family, role: "residual" }];
    views.forEach(function (view, k) {
      rows.push({ label: mark(k) + "block " + k + ": + attention = resid_mid", values: vec(view.resid_mid, i), family: family, role: "output" });
      rows.push({ label: mark(k) + "block " + k + ": + FFN = resid_post", values: vec(view.resid_post, i), family: family, role: "residual", result: true });
    });
    stackBox.appendChild(el("h2", { id: "stack-title", text: "The residual stream through the " + views.length + " blocks, token " + tokenLabel(i) }));
    stackBox.appendChild(textEl("p", "Each block reads the row the one before handed on (block k+1's resid_pre is block k's resid_post, the same numbers), adds its attention's output and its FFN's, and hands the sum on. \u25b8 marks the block whose steps are shown below.", "note"));
    stackBox.appendChild(numTable({ caption: "Token " + tokenLabel(i) + "'s row of the residual stream, block after block", columns: cols("d", D), rows: rows }, box));
    const lens = views.map(function (view, k) {
      const probs = vec(view.probs, i), top = ranked(probs).slice(0, TOP_WORDS);
      return { label: mark(k) + "after block " + k + (k === views.length - 1 ? " (the model's prediction)" : ""), cells: top.map(function (w) { return { value: probs[w], text: wordName(w) + " " + fmt(probs[w]), family: S.weights_family }; }) };
    });
    stackBox.appendChild(numTable({ caption: "The next word after " + quoted(TOKENS[i]) + " predicted from the stream after each block (final LayerNorm, W_U, softmax): its " + TOP_WORDS + " most likely", columns: range(TOP_WORDS).map(function (k) { return "#" + (k + 1); }), rows: lens }, box));
    stackBox.appendChild(box.operands); stackBox.appendChild(box.copied); stackBox.appendChild(box.copyNote);
  }

  function chooseToken(j, focus) { state.token = j; update(); if (focus) chips[j].focus(); }
  function chooseHead(g, focus) { state.head = g; update(); if (focus) headButtons[g].focus(); }
  function chooseStep(k, focus) { state.step = VIEW_NAMES[k]; showStep(); writeHash(); if (focus) stepButtons[k].focus(); }

  /* The current step, scrolled fully into view when it is not (from its top when it is taller than the window). */
  function bringIntoView() {
    const section = document.getElementById("step-" + state.step);
    if (!section) return;
    const box = section.getBoundingClientRect();
    if (box.top >= 0 && box.bottom <= window.innerHeight) return;
    section.scrollIntoView({ block: "start", behavior: "instant" });
  }
  /* Presenting: Page Down / Page Up (or n / p) step through the calculation from anywhere but a text field. */
  on(document, "keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const forward = event.key === "PageDown" || (event.key === "n" && !event.shiftKey);
    const back = event.key === "PageUp" || (event.key === "p" && !event.shiftKey);
    if (!forward && !back) return;
    const target = event.target;
    if (target && target.closest && target.closest("input:not([type=checkbox]), textarea, select, [contenteditable]")) return;
    event.preventDefault();
    const k = Math.min(VIEW_NAMES.length - 1, Math.max(0, VIEW_NAMES.indexOf(state.step) + (forward ? 1 : -1)));
    chooseStep(k, false);
    const title = document.getElementById("title-" + state.step);
    if (title) title.focus({ preventScroll: true });
    bringIntoView();
  });

  function renderSteps() {
    stepsBox.textContent = "";
    stepsBox.appendChild(overviewSection());
    DATA.steps.forEach(function (step, index) { stepsBox.appendChild(stepSection(step, index)); });
    showStep();
  }
  function stepSection(step, index) {
      const k = index + 1; // its place among the views, after the overview
      const box = { operands: el("p", { class: "operands", hidden: true, "aria-live": "polite" }), copied: el("textarea", { class: "copied", readonly: true, rows: 4, hidden: true, "aria-label": "Copied table" }), copyNote: el("p", { class: "note", "aria-live": "polite" }) };
      const result = STEPS[step.kind](state.token, state.head, box, step.args || {});
      const recorded = unplacedFields(step.name, result.body).map(function (field) { return recordedTable(field, state.token, state.head, box); });
      const prev = el("button", { type: "button", text: k === 1 ? "← overview" : "← previous step" });
      const next = el("button", { type: "button", text: "next step →", disabled: k === VIEW_NAMES.length - 1 });
      prev.addEventListener("click", function () { chooseStep(k - 1, false); bringIntoView(); });
      next.addEventListener("click", function () { chooseStep(k + 1, false); bringIntoView(); });
      const section = el("section", { class: "step", id: "step-" + step.name, "data-step": step.name, "aria-labelledby": "title-" + step.name },
        el("h2", { id: "title-" + step.name, text: k + ". " + step.title, tabindex: "-1" }),
        textEl("p", step.formula, "formula"),
        result.body,
        recorded,
        checkLine(result.checks, result.note),
        box.operands, box.copied, box.copyNote,
        el("div", { class: "stepfoot" }, prev, next));
      return section;
  }
  /* The drag's redraw: the numbers in view built again, written into the nodes shown. */
  function quickUpdate() {
    quickPattern();
    renderStack();
    const index = STEP_NAMES.indexOf(state.step), shown = document.getElementById("step-" + state.step);
    if (shown && !state.all) morph(shown, index < 0 ? overviewSection() : stepSection(DATA.steps[index], index));
    if (STACK) morph(document.getElementById("stack-view"), stackBox);
    const dragged = LIVE.dragged, value = dragged && P[dragged.param] ? P[dragged.param].data[indexOf(P[dragged.param], dragged.at)] : null;
    // the Parameters table: only the dragged number changes (a step's table showing it is built again above)
    Array.prototype.forEach.call(document.querySelectorAll('#wb-params td[data-param="' + (dragged ? dragged.param : "") + '"][data-at="' + (dragged ? dragged.at.join(",") : "") + '"]'), function (td) {
      td.textContent = fmt(value);
      paint(td, value, DATA.param_families[dragged.param]);
      td.classList.add("edited");
    });
  }
  /* Write fresh's text and attributes into old where the two have the same shape (a node replaced where not), so
     that only the text nodes and colours that changed are touched; ids, focus order and visibility stay old's. */
  const KEPT = { id: 1, tabindex: 1, hidden: 1, "aria-labelledby": 1 };
  function morph(old, fresh) {
    if (!old) return;
    if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName || old.childNodes.length !== fresh.childNodes.length) { old.replaceWith(fresh); return; }
    if (old.nodeType === 3) { if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue; return; }
    if (old.nodeType !== 1 || old.isEqualNode(fresh)) return; // the same (a native comparison): most cells of a drag
    const attributes = fresh.attributes;
    for (let a = 0; a < attributes.length; a++) {
      const name = attributes[a].name;
      if (KEPT[name] || old.getAttribute(name) === attributes[a].value) continue;
      if (name === "style") old.style.cssText = fresh.style.cssText; // CSSOM: the policy forbids style attributes
      else old.setAttribute(name, attributes[a].value);
    }
    for (let a = old.attributes.length - 1; a >= 0; a--) {
      const name = old.attributes[a].name;
      if (KEPT[name] || fresh.hasAttribute(name)) continue;
      if (name === "style") old.style.cssText = ""; else old.removeAttribute(name);
    }
    for (let a = old.firstChild, b = fresh.firstChild; b;) { // b may move into old's place: step on first
      const nextA = a.nextSibling, nextB = b.nextSibling;
      morph(a, b);
      a = nextA; b = nextB;
    }
  }

  function showStep() {
    stepButtons.forEach(function (button, k) {
      const current = VIEW_NAMES[k] === state.step;
      if (current) button.setAttribute("aria-current", "step"); else button.removeAttribute("aria-current");
      button.tabIndex = current ? 0 : -1;
    });
    Array.prototype.forEach.call(stepsBox.children, function (section) { section.hidden = section.getAttribute("data-step") !== state.step; });
    markScrollers();
  }

  /* A table wider than its box scrolls inside it; such a box is a focusable, named region so that
     the keyboard can scroll it too (and axe's scrollable-region-focusable holds). */
  function markScrollers() {
    if (QUICK) return; // a drag's redraw changes numbers, not widths: the boxes are measured again when it ends
    const boxes = Array.prototype.slice.call(document.querySelectorAll(".scroll"));
    const wide = boxes.map(function (box) { return box.scrollWidth > box.clientWidth + 1; }); // every read first: one layout, not one per box
    boxes.forEach(function (box, k) {
      if (wide[k]) {
        box.tabIndex = 0; box.setAttribute("role", "region"); box.setAttribute("aria-label", box.getAttribute("data-label"));
      } else {
        box.removeAttribute("tabindex"); box.removeAttribute("role"); box.removeAttribute("aria-label");
      }
      scrollCue(box, wide[k]);
    });
  }
  /* A box that scrolls sideways says so: a "scroll →" line above it and a fading edge on each side that has more. */
  function scrollCue(box, wide) {
    let hint = box.previousElementSibling && box.previousElementSibling.classList.contains("scrollhint") ? box.previousElementSibling : null;
    box.classList.toggle("wide", wide);
    if (!wide) { if (hint) hint.remove(); box.classList.remove("more-left", "more-right"); return; }
    if (!hint) {
      hint = el("p", { class: "scrollhint", "aria-hidden": "true" });
      box.parentNode.insertBefore(hint, box);
    }
    if (!box.hasAttribute("data-cue")) {
      box.setAttribute("data-cue", "");
      box.addEventListener("scroll", function () { edges(box, box.previousElementSibling); }, { passive: true });
    }
    edges(box, hint);
  }
  function edges(box, hint) {
    const left = box.scrollLeft > 1, right = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    box.classList.toggle("more-left", left);
    box.classList.toggle("more-right", right);
    if (hint && hint.classList.contains("scrollhint")) hint.textContent = (left ? "\u2190 " : "") + "scroll sideways for more columns" + (right ? " \u2192" : "");
  }

  /* A colour scale as a bar of its stops between its two ends: the weights' 0 to 1, a signed family's −limit to +limit
     (one that cannot be negative, S.never_negative: 0 to +limit, the signed map's half its cells use);
     named as its family's scale, or as the quantity (name) drawn on it. */
  function scaleLegend(family, name) {
    const weights = family === S.weights_family, limit = weights ? 1 : DATA.families[family], stops = 9;
    if (!weights && limit <= S.zero_limit) return zeroLegend(family, name);
    const low = weights || S.never_negative.indexOf(family) >= 0 ? 0 : -limit;
    const bar = el("span", { class: "legendbar", "aria-hidden": "true" });
    range(stops).forEach(function (k) {
      const value = low + (limit - low) * k / (stops - 1);
      const stop = weights ? weightStop(value) : signedStop(value, limit), swatch = el("span", { class: "swatch" });
      swatch.style.setProperty("background-color", stop[0]);
      bar.appendChild(swatch);
    });
    return el("p", { class: "legend", "data-family": family }, textEl("span", (name || scaleName(family)) + ": ", "label"), textEl("span", low === 0 ? "0" : MINUS + fmt(limit)), bar, textEl("span", weights ? "1" : fmt(limit)));
  }
  /* A family that is 0 wherever it is finite (the mask): no scale to read, its values as the tables draw them —
     0 white and, where the mask blocks a key, −∞ in the blocked cells' colour. */
  function zeroLegend(family, name) {
    const white = el("span", { class: "swatch" }), blocked = el("span", { class: "swatch blockedcell" });
    white.style.setProperty("background-color", signedStop(0, 1)[0]);
    const blocks = family === familyOf("mask") && C.causal;
    return el("p", { class: "legend", "data-family": family }, textEl("span", (name || scaleName(family)) + ": ", "label"),
      el("span", { class: "legendbar", "aria-hidden": "true" }, white), textEl("span", blocks ? " 0 for a key seen, " : " 0 everywhere"),
      blocks ? el("span", { class: "legendbar", "aria-hidden": "true" }, blocked) : null, blocks ? textEl("span", " " + MINUS + "\u221e for a key blocked") : null);
  }
  function legends() { // a switch, not a <details>: the page's <details> each open onto a table of terms
    const families = Object.keys(DATA.families).filter(function (f) { return f !== S.weights_family; });
    const own = Object.keys(DATA.scale_names.fields).map(function (field) { return scaleLegend(familyOf(field), DATA.scale_names.fields[field]); });
    const list = el("div", { id: "legend-list", hidden: true }, scaleLegend(S.weights_family), own, families.map(function (family) { return scaleLegend(family); }));
    const button = el("button", { type: "button", class: "copy", "aria-expanded": "false", "aria-controls": "legend-list", text: "show the colour scales" });
    button.addEventListener("click", function () {
      list.hidden = !list.hidden;
      button.setAttribute("aria-expanded", String(!list.hidden));
      button.textContent = list.hidden ? "show the colour scales" : "hide the colour scales";
    });
    return el("div", { class: "legends" }, textEl("span", "Colour scales: one per quantity, the same in every table (" + families.length + " signed, " + (1 + own.length) + " from 0 to 1) ", "note"), button, list);
  }

  /* A cell of the pattern: its weight's text, colour, title and mark (moved from the trained parameters' weight). */
  function patternCell(td, q, j, dense) {
    const w = at(T.weights, state.head, q, j), blocked = at(T.mask, q, j) === -Infinity, text = dense ? "" : blocked ? S.blocked_weight_label : fmt(w);
    const was = LIVE && LIVE.base && !blocked ? fmt(at(LIVE.base.weights, state.head, q, j)) : null, moved = was !== null && was !== fmt(w);
    const shown = [fmt(w), blocked ? "" : weightStop(w)[0], moved].join(); // what the cell shows: unchanged, nothing is written
    if (td.blockvizShown === shown) return;
    td.blockvizShown = shown;
    if (td.textContent !== text) td.textContent = text;
    td.setAttribute("title", TOKENS[q] + " → " + TOKENS[j] + ": " + fmt(w) + (blocked ? " (blocked)" : "") + (moved ? " (" + was + " with the trained parameters)" : ""));
    paint(td, w, S.weights_family, blocked);
    td.classList.toggle("moved", moved);
  }
  /* The drag's redraw of the pattern: each cell shown written again in place. */
  function quickPattern() {
    const dense = N > 16 && !state.patternNumbers;
    Array.prototype.forEach.call(document.querySelectorAll("#app .pattern tr[data-query]"), function (tr) {
      const q = parseInt(tr.getAttribute("data-query"), 10), tds = tr.getElementsByTagName("td");
      for (let j = 0; j < tds.length; j++) patternCell(tds[j], q, j, dense);
    });
  }
  /* A dense pattern's cells share 36rem, each 0.5rem to 0.9rem (0.8rem at 45 tokens, 0.56rem at 64). A row's
     label needs 0.75rem (12 px): in narrower rows every k-th row is labelled, and the selected one (its neighbours not). */
  const DENSE_ROOM = 36, DENSE_CELL = [0.5, 0.9], LABEL_REM = 0.75;
  function denseCell(n) { return Math.min(DENSE_CELL[1], Math.max(DENSE_CELL[0], DENSE_ROOM / n)); }
  function denseLabel(q, n) {
    const every = Math.ceil(LABEL_REM / denseCell(n) - 1e-9), distance = Math.abs(q - state.token);
    return distance === 0 || (q % every === 0 && distance >= every) ? String(q) : "";
  }
  function renderPattern() {
    patternBox.textContent = "";
    // Past 16 tokens the pattern is an overview in colour; its numbers are one switch away (colour is never their only carrier).
    const dense = N > 16 && !state.patternNumbers;
    patternBox.appendChild(el("h2", { text: "Attention pattern, head " + state.head }));
    patternBox.appendChild(textEl("p", "Rows are queries, columns keys; row " + tokenLabel(state.token) + " is highlighted. Click a row to select its token.", "note"));
    if (N > 16) {
      const numbers = el("input", { type: "checkbox", id: "pattern-numbers" });
      numbers.checked = state.patternNumbers;
      numbers.addEventListener("change", function () {
        state.patternNumbers = numbers.checked;
        renderPattern(); markScrollers();
        document.getElementById("pattern-numbers").focus();
      });
      patternBox.appendChild(el("p", { class: "note" }, el("label", { for: "pattern-numbers" }, numbers, textEl("span", " show the weights as numbers (the table then scrolls)"))));
    }
    const table = el("table", { class: dense ? "grid dense" : "grid", "aria-label": "Attention weights of head " + state.head + ": rows are queries, columns keys" });
    if (dense) table.style.setProperty("--cell", denseCell(N) + "rem");
    const head = el("tr", null, el("td", { class: "corner" }));
    range(N).forEach(function (j) { head.appendChild(el("th", { scope: "col", text: dense ? "" : TOKENS[j], title: tokenLabel(j) })); });
    table.appendChild(el("thead", null, head));
    const body = el("tbody");
    range(N).forEach(function (q) {
      const tr = el("tr", { class: q === state.token ? "selected" : null, "data-query": q });
      const th = el("th", { scope: "row", text: dense ? denseLabel(q, N) : TOKENS[q], title: tokenLabel(q) });
      tr.appendChild(th);
      range(N).forEach(function (j) {
        const w = at(T.weights, state.head, q, j), blocked = at(T.mask, q, j) === -Infinity;
        const td = el("td", { "data-field": dense ? null : "weights", "data-at": dense ? null : [state.head, q, j].join(",") });
        patternCell(td, q, j, dense);
        tr.appendChild(td);
      });
      tr.addEventListener("click", function () { chooseToken(q, false); });
      body.appendChild(tr);
    });
    table.appendChild(body);
    patternBox.appendChild(el("div", { class: "scroll", "data-label": "Attention pattern, head " + state.head }, table));
    const readout = el("p", { class: "note hoverline", "aria-live": "polite", text: "Point at or focus a cell for its weight." });
    const point = function (event) { const td = event.target.closest && event.target.closest("td[title]"); if (td) readout.textContent = td.getAttribute("title"); };
    table.addEventListener("mouseover", point);
    table.addEventListener("focusin", point);
    patternBox.appendChild(readout);
    patternBox.appendChild(scaleLegend(S.weights_family));
    if (dense) patternBox.appendChild(textEl("p", "Hover a cell for its weight, or show the weights as numbers; the selected row's are also in the Softmax step.", "note"));
  }

  function update() {
    chips.forEach(function (chip, j) { chip.setAttribute("aria-checked", String(j === state.token)); chip.tabIndex = j === state.token ? 0 : -1; });
    headButtons.forEach(function (button, g) { button.setAttribute("aria-checked", String(g === state.head)); button.tabIndex = g === state.head ? 0 : -1; });
    renderPattern();
    renderStack();
    renderSteps();
    renderParams();
    writeHash();
  }

  if (QUICK) { quickUpdate(); return; }
  if (!LIVE || LIVE.firstDraw) readHash();
  applyTheme();
  update();
  on(window, "hashchange", function () {
    const before = [state.token, state.head, state.step].join();
    readHash();
    if ([state.token, state.head, state.step].join() !== before) update();
  });
  on(window, "resize", markScrollers);
  if (PRINT && PRINT.addEventListener) on(PRINT, "change", applyTheme);
  on(window, "beforeprint", applyTheme);
  on(window, "afterprint", applyTheme);
  if (LIVE) document.body.setAttribute("data-workbench", "");
  document.body.setAttribute("data-ready", "true");
  }
})();
