/* blockviz's block in the page: the arithmetic the explorer's steps check with, and the whole
   forward pass of the trained toy model (blockviz.toy.model.ToyModel) from its parameters, in
   float64. The explorer's workbench runs it when a sentence is typed or a weight edited; a
   script runs it as window.blockviz.run(sentence, edits). A tensor is
   {shape, data: Float64Array (row-major), offset}; −∞ (a blocked key) is -Infinity. */
(function () {
  "use strict";

  /* erf to double precision: Taylor series below 3, continued fraction for erfc above. */
  function erf(x) {
    const ax = Math.abs(x);
    if (ax < 3) {
      let term = ax, sum = ax;
      for (let n = 1; n < 200; n++) {
        term *= -ax * ax / n;
        const next = term / (2 * n + 1);
        sum += next;
        if (Math.abs(next) < 1e-17 * Math.abs(sum)) break;
      }
      return Math.sign(x) * sum * 2 / Math.sqrt(Math.PI);
    }
    let fraction = 0;
    for (let k = 60; k >= 1; k--) fraction = (k / 2) / (ax + fraction);
    const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + fraction);
    return Math.sign(x) * (1 - erfc);
  }
  const ACTIVATIONS = {
    gelu: function (x) { return 0.5 * x * (1 + erf(x / Math.SQRT2)); },
    relu: function (x) { return Math.max(0, x); },
    gelu_tanh: function (x) { return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x))); },
    silu: function (x) { return x / (1 + Math.exp(-x)); },
  };

  function exact(v) { return v; }
  /* LayerNorm of one row x (blockviz.block.LayerNorm): mean, centred, var (population), norm, out = γ ⊙ norm + β;
     round (Math.fround for a float32 model) rounds each intermediate as torch stores it. */
  function layerNormRow(x, gamma, beta, eps, round) {
    const r = round || exact, d = x.length;
    let mean = 0;
    for (let c = 0; c < d; c++) mean += x[c];
    mean = r(mean / d);
    const centred = new Array(d);
    let variance = 0;
    for (let c = 0; c < d; c++) { centred[c] = r(x[c] - mean); variance += centred[c] * centred[c]; }
    variance = r(variance / d);
    const root = r(Math.sqrt(r(variance + eps)));
    const norm = centred.map(function (v) { return r(v / root); });
    const out = norm.map(function (v, c) { return r(r(gamma[c] * v) + beta[c]); });
    return { mean: mean, centred: centred, variance: variance, root: root, norm: norm, out: out };
  }
  /* Softmax of one row, step by step (blockviz.attention.softmax_steps): max, exp(x − max), their sum, the weights. */
  function softmaxRow(x, round) {
    const r = round || exact;
    let max = -Infinity;
    for (let k = 0; k < x.length; k++) if (x[k] > max) max = x[k];
    const exps = x.map(function (v) { return r(Math.exp(r(v - max))); });
    let sum = 0;
    for (let k = 0; k < exps.length; k++) sum += exps[k];
    sum = r(sum);
    return { max: max, exps: exps, sum: sum, weights: exps.map(function (v) { return r(v / sum); }) };
  }

  /* ---------- tokens (blockviz.tokens.tokenize; blockviz.toy.vocabulary.Vocabulary.ids) ---------- */

  const TOKEN = /'(?:s|t|re|ve|m|ll|d)(?![\p{L}\p{N}_])|[\p{L}\p{N}_\u0300-\u036f]+|[^\p{L}\p{N}_\s](?:[\u{fe00}-\u{fe0f}\u{1f3fb}-\u{1f3ff}]|\u200d[^\p{L}\p{N}_\s])*/giu;
  function tokenize(sentence) { return sentence.match(TOKEN) || []; }
  /* The tokens of sentence for a toy model of vocabulary (words, "<unk>" first) and maxTokens positions:
     {tokens, ids, unknown (as typed, each once), error (the CLI's message, or null)}. */
  function toyTokens(sentence, vocabulary, maxTokens) {
    const tokens = tokenize(sentence), index = {};
    vocabulary.forEach(function (word, k) { if (!(word in index)) index[word] = k; });
    const ids = tokens.map(function (t) { const id = index[t.toLowerCase()]; return id === undefined ? 0 : id; });
    const unknown = [];
    tokens.forEach(function (t, k) { if (ids[k] === 0 && unknown.indexOf(t) < 0) unknown.push(t); });
    let error = null;
    if (!tokens.length) error = 'the sentence is empty: give at least one word, e.g. "the cat sat"';
    else if (tokens.length > maxTokens) error = "the sentence has " + tokens.length + " tokens, more than max_tokens " + maxTokens + ": shorten it (the toy model has " + maxTokens + " positions)";
    else if (ids.every(function (id) { return id === 0; })) error = "no word of the sentence is in the toy model's vocabulary";
    return { tokens: tokens, ids: ids, unknown: unknown, error: error };
  }

  /* ---------- tensors ---------- */

  /* A float32 model's tensors are stored in float32, as torch stores each one it computes: every step
     then starts from the numbers the record holds (in float64 throughout, a row of small variance
     amplifies the first steps' rounding past 1e-5 by the final LayerNorm). */
  let Store = Float64Array;
  function tensor(shape) {
    return { shape: shape, data: new Store(shape.reduce(function (a, b) { return a * b; }, 1)), offset: 0 };
  }
  function row(t, k) { // row k of a 2-D tensor, or of the rows of the last dimension
    const width = t.shape[t.shape.length - 1];
    return Array.from(t.data.subarray(t.offset + k * width, t.offset + (k + 1) * width));
  }
  function setRow(t, k, values) { t.data.set(values, k * t.shape[t.shape.length - 1]); }
  /* x · W (+ b): x a row (d_in), W (d_in, d_out) at offset, b (d_out) at offset or null. With round
     (a float32 model) the sum is rounded after each term, as a float32 matrix product with fused
     multiply-adds does (the product of two float32 numbers is exact in float64). */
  function project(x, W, wOffset, b, bOffset, round) {
    const r = round || exact, dOut = W.shape[W.shape.length - 1], out = new Array(dOut);
    for (let c = 0; c < dOut; c++) {
      let sum = 0;
      for (let k = 0; k < x.length; k++) sum = r(sum + x[k] * W.data[wOffset + k * dOut + c]);
      out[c] = b ? r(sum + b.data[bOffset + c]) : sum;
    }
    return out;
  }

  /* The toy model's forward pass: ids (n) → every record field (blockviz.toy.model.ToyModel.forward),
     shapes as the record's. params: {record name: tensor}; config: the record's (d_model, n_heads,
     d_head, d_ff, activation, causal, ln_eps); maskOff: no causal mask (every key allowed). */
  function forward(ids, params, config, maskOff) {
    const n = ids.length, D = config.d_model, H = config.n_heads, E = config.d_head, F = config.d_ff;
    const V = params.W_U.shape[1], activate = ACTIVATIONS[config.activation], eps = config.ln_eps;
    const P = params, T = {};
    Store = config.dtype === "float32" ? Float32Array : Float64Array;
    const round = config.dtype === "float32" ? Math.fround : exact;
    T.embed = tensor([n, D]); T.pos_embed = tensor([n, D]); T.resid_pre = tensor([n, D]);
    ids.forEach(function (id, i) {
      const e = row(P.W_E, id), p = row(P.W_pos, i);
      setRow(T.embed, i, e); setRow(T.pos_embed, i, p);
      setRow(T.resid_pre, i, e.map(function (v, c) { return v + p[c]; }));
    });
    function norm(name, source, output) {
      T[name + "_mean"] = tensor([n]); T[name + "_centred"] = tensor([n, D]); T[name + "_var"] = tensor([n]);
      T[name + "_norm"] = tensor([n, D]); T[output] = tensor([n, D]);
      const gamma = row(P[name + ".weight"], 0), beta = row(P[name + ".bias"], 0);
      for (let i = 0; i < n; i++) {
        const r = layerNormRow(row(T[source], i), gamma, beta, eps, round);
        T[name + "_mean"].data[i] = r.mean; T[name + "_var"].data[i] = r.variance;
        setRow(T[name + "_centred"], i, r.centred); setRow(T[name + "_norm"], i, r.norm); setRow(T[output], i, r.out);
      }
    }
    norm("ln1", "resid_pre", "ln1");
    ["query", "key", "value"].forEach(function (field) {
      const m = field.charAt(0).toUpperCase(), W = P["attn.W_" + m], b = P["attn.b_" + m];
      T[field] = tensor([H, n, E]);
      for (let h = 0; h < H; h++) for (let i = 0; i < n; i++) T[field].data.set(project(row(T.ln1, i), W, h * D * E, b, h * E, round), (h * n + i) * E);
    });
    T.mask = tensor([n, n]);
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (config.causal && !maskOff) T.mask.data[i * n + j] = -Infinity;
    ["scores", "scaled_scores", "masked_scores", "exp_scores", "weights"].forEach(function (f) { T[f] = tensor([H, n, n]); });
    T.row_max = tensor([H, n]); T.exp_sums = tensor([H, n]); T.head_outputs = tensor([H, n, E]);
    const root = Math.sqrt(E);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < n; i++) {
        const q = T.query.data.subarray((h * n + i) * E, (h * n + i + 1) * E), at = (h * n + i) * n;
        for (let j = 0; j < n; j++) {
          const k = T.key.data.subarray((h * n + j) * E, (h * n + j + 1) * E);
          let s = 0;
          for (let c = 0; c < E; c++) s = round(s + q[c] * k[c]);
          T.scores.data[at + j] = s;
          T.scaled_scores.data[at + j] = T.scores.data[at + j] / root;
          T.masked_scores.data[at + j] = T.scaled_scores.data[at + j] + T.mask.data[i * n + j];
        }
        const soft = softmaxRow(Array.from(T.masked_scores.data.subarray(at, at + n)), round);
        T.row_max.data[h * n + i] = soft.max; T.exp_sums.data[h * n + i] = soft.sum;
        T.exp_scores.data.set(soft.exps, at); T.weights.data.set(soft.weights, at);
        const out = new Array(E).fill(0);
        for (let j = 0; j < n; j++) for (let c = 0; c < E; c++) out[c] = round(out[c] + T.weights.data[at + j] * T.value.data[(h * n + j) * E + c]);
        T.head_outputs.data.set(out, (h * n + i) * E);
      }
    }
    T.concat = tensor([n, D]); T.attn_out = tensor([n, D]); T.resid_mid = tensor([n, D]);
    for (let i = 0; i < n; i++) {
      for (let h = 0; h < H; h++) T.concat.data.set(T.head_outputs.data.subarray((h * n + i) * E, (h * n + i + 1) * E), i * D + h * E);
      setRow(T.attn_out, i, project(row(T.concat, i), P["attn.W_O"], 0, P["attn.b_O"], 0, round));
      const o = row(T.attn_out, i), x = row(T.resid_pre, i);
      setRow(T.resid_mid, i, o.map(function (v, c) { return x[c] + v; }));
    }
    norm("ln2", "resid_mid", "ln2");
    T.ffn_pre = tensor([n, F]); T.ffn_post = tensor([n, F]); T.ffn_out = tensor([n, D]); T.resid_post = tensor([n, D]);
    for (let i = 0; i < n; i++) {
      setRow(T.ffn_pre, i, project(row(T.ln2, i), P["ffn.W_in"], 0, P["ffn.b_in"], 0, round));
      setRow(T.ffn_post, i, row(T.ffn_pre, i).map(activate));
      setRow(T.ffn_out, i, project(row(T.ffn_post, i), P["ffn.W_out"], 0, P["ffn.b_out"], 0, round));
      const out = row(T.ffn_out, i), x = row(T.resid_mid, i);
      setRow(T.resid_post, i, out.map(function (v, c) { return x[c] + v; }));
    }
    norm("ln_f", "resid_post", "ln_f");
    T.logits = tensor([n, V]); T.probs = tensor([n, V]);
    for (let i = 0; i < n; i++) {
      setRow(T.logits, i, project(row(T.ln_f, i), P.W_U, 0, null, 0, round));
      setRow(T.probs, i, softmaxRow(row(T.logits, i), round).weights);
    }
    return T;
  }

  /* params with edits applied, on copies: edits {record name: [[index…, value], …]}, each value
     rounded by round (Math.fround for a float32 model: the number Python reads from the file).
     Throws an Error naming the problem for a parameter that does not exist, an index out of its
     shape, or a value that is not a finite number. */
  function edited(params, edits, round) {
    const out = Object.assign({}, params);
    Object.keys(edits || {}).forEach(function (name) {
      if (!(name in params)) throw new Error("no parameter " + JSON.stringify(name) + ": choose from " + Object.keys(params).join(", "));
      const p = params[name], copy = { shape: p.shape, data: Float64Array.from(p.data), offset: 0 };
      (edits[name] || []).forEach(function (edit) {
        const index = edit.slice(0, -1), value = edit[edit.length - 1];
        if (index.length !== p.shape.length || index.some(function (k, d) { return !Number.isInteger(k) || k < 0 || k >= p.shape[d]; })) {
          throw new Error("index [" + index.join(", ") + "] is outside " + name + ", shaped " + p.shape.join(" × "));
        }
        if (typeof value !== "number" || !Number.isFinite(value)) throw new Error("the value of " + name + "[" + index.join(", ") + "] must be a finite number, not " + String(value));
        copy.data[index.reduce(function (flat, k, d) { return flat * p.shape[d] + k; }, 0)] = round ? round(value) : value;
      });
      out[name] = copy;
    });
    return out;
  }

  /* A tensor as the record's JSON writes it: nested lists, −∞ as null. */
  function nested(t) {
    function build(depth, offset) {
      if (depth === t.shape.length) { const v = t.data[offset]; return v === -Infinity ? null : v; }
      const stride = t.shape.slice(depth + 1).reduce(function (a, b) { return a * b; }, 1), out = [];
      for (let k = 0; k < t.shape[depth]; k++) out.push(build(depth + 1, offset + k * stride));
      return out;
    }
    return build(0, t.offset);
  }

  window.blockviz = Object.assign(window.blockviz || {}, {
    math: { erf: erf, ACTIVATIONS: ACTIVATIONS, layerNormRow: layerNormRow, softmaxRow: softmaxRow, tokenize: tokenize,
            toyTokens: toyTokens, forward: forward, edited: edited, nested: nested },
  });
})();
