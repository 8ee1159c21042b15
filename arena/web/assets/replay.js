// The replay page: lays out the data arena/web/replay.py embedded and navigates it.
// It computes no figure: probabilities, truths, points and the audit come from Python.
// Every text from the log goes in through textContent, never as markup.
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const header = data.header;
  const slots = header.seats.map((seat) => seat.slot);
  const deals = data.deals;
  const SPECTATOR = -1;
  const state = { deal: 0, decision: 0, view: SPECTATOR };
  const flagged = flaggedDirections(data.flags);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }
  const $ = (id) => document.getElementById(id);
  const signed = (n) => (n > 0 ? "+" + n : String(n));
  const prob = (p) => p.toFixed(3);
  const seatName = (slot) => "s" + slot;
  const bidText = (q, f) => q + "x" + f;

  function flaggedDirections(flags) {
    // Where a flag applies: the ordered pairs (facer, bidder) it names.
    const out = new Map();
    for (const flag of flags) {
      const pair = flag.slots || flag.policies || [];
      const [a, b] = pair;
      const add = (x, y) => out.set(x + "," + y, flag.flag);
      add(a, b);
      if (flag.flag === "soft-play") add(b, a);
    }
    return out;
  }

  // --- position ----------------------------------------------------------------------------

  const lastDeal = () => deals.length - 1;
  const lastDecision = (d) => Math.max(deals[d].decisions.length - 1, 0);
  const clamp = (n, low, high) => Math.min(Math.max(n, low), high);

  function go(deal, decision) {
    if (!deals.length) return;
    state.deal = clamp(deal, 0, lastDeal());
    state.decision = clamp(decision, 0, lastDecision(state.deal));
    const view = state.view === SPECTATOR ? "" : "&seat=" + state.view;
    history.replaceState(null, "", "#deal=" + state.deal + "&decision=" + state.decision + view);
    render();
  }
  function next() {
    if (state.decision < lastDecision(state.deal)) go(state.deal, state.decision + 1);
    else if (state.deal < lastDeal()) go(state.deal + 1, 0);
  }
  function prev() {
    if (state.decision > 0) go(state.deal, state.decision - 1);
    else if (state.deal > 0) go(state.deal - 1, lastDecision(state.deal - 1));
  }
  function fromFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    const number = (name, fallback) => {
      const value = Number.parseInt(params.get(name), 10);
      return Number.isFinite(value) ? value : fallback;
    };
    const seat = number("seat", SPECTATOR);
    state.view = slots.includes(seat) ? seat : SPECTATOR;
    $("view").value = String(state.view);
    go(number("deal", 0), number("decision", 0));
  }

  // --- what the chosen view may show (arena/view.py: a seat knows its own hand and notes,
  // the public bids and published talk, and every hand once a challenge reveals them) -----

  const spectator = () => state.view === SPECTATOR;
  const own = (slot) => spectator() || slot === state.view;
  function revealed(deal, upto) {
    const last = deal.decisions[upto];
    return last !== undefined && last.type === "challenge";
  }

  // --- rendering ---------------------------------------------------------------------------

  function render() {
    const deal = deals[state.deal];
    const shown = deal.decisions.slice(0, state.decision + 1);
    const current = shown[shown.length - 1];
    const isRevealed = revealed(deal, state.decision);
    $("position").textContent =
      "deal " + deal.deal + " of 0–" + deals[lastDeal()].deal +
      " · decision " + (deal.decisions.length ? state.decision : "–") +
      " of 0–" + lastDecision(state.deal);
    $("deal-title").textContent =
      "Deal " + deal.deal + ": " + seatName(deal.opener) + " opens";
    renderTable(deal, current, isRevealed);
    renderDecisions(deal, shown);
    renderReveal(current);
    markDealList(isRevealed);
    document.body.classList.toggle("seat-view", !spectator());
    $("audit").hidden = !spectator();
  }

  function markDealList(isRevealed) {
    // A seat knows how earlier deals ended (its view's history), not this one before the
    // reveal nor any later one: in a seat view those outcomes are hidden (see replay.css).
    $("deals").tBodies[0].querySelectorAll("tr").forEach((row, index) => {
      row.classList.toggle("current", index === state.deal);
      row.classList.toggle("later", index > state.deal || (index === state.deal && !isRevealed));
    });
  }

  function renderTable(deal, current, isRevealed) {
    const table = $("table");
    table.replaceChildren();
    const points = isRevealed ? deal.pointsAfter : deal.pointsBefore;
    const face = current ? current.face : null;
    for (const slot of header.tableOrder) {
      const visible = own(slot) || isRevealed;
      const hand = el("div", { class: "hand" });
      for (const symbol of deal.hands[slot]) {
        if (!visible) hand.append(el("span", { class: "sym hidden", text: "?" }));
        else hand.append(el("span", { class: symbol === face ? "sym hit" : "sym", text: String(symbol) }));
      }
      const card = el(
        "div",
        { class: current && current.slot === slot ? "seat acting" : "seat", "data-slot": String(slot) },
        el("div", { class: "name", text: seatName(slot) + (slot === deal.opener ? " · opens" : "") +
          (slot === state.view ? " · you" : "") }),
        el("div", { class: "policy", text: header.seats[slot].policy }),
        el("div", { class: "points", text: signed(points[slot]) }),
        hand,
      );
      table.append(card);
    }
  }

  function decisionHead() {
    const columns = spectator()
      ? ["#", "seat", "action", "p bidder", "faced by", "p facer", "bid true?", "talk", "notes", "marks"]
      : ["#", "seat", "action", "p (your hand)", "bid true?", "talk", "your notes", "marks"];
    return el("tr", null, ...columns.map((c) => el("th", { text: c })));
  }

  function renderDecisions(deal, shown) {
    $("decisions").tHead.replaceChildren(decisionHead());
    const body = $("decisions").tBodies[0];
    body.replaceChildren();
    const isRevealed = revealed(deal, state.decision);
    shown.forEach((decision, index) => {
      const row = el("tr", {
        class: index === shown.length - 1 ? "decision current" : "decision",
        "data-kind": decision.type,
        "data-index": String(index),
      });
      row.append(el("td", { class: "num", text: String(index) }), el("td", { text: seatName(decision.slot) }));
      if (decision.type === "bid") bidCells(row, decision, isRevealed);
      else challengeCells(row, decision);
      const faced = index > 0 ? shown[index - 1].slot : null;
      row.append(talkCell(decision), notesCell(decision), marksCell(decision, faced));
      body.append(row);
      if (spectator()) body.append(...thinkingRows(decision, row.cells.length));
    });
  }

  function thinkingRows(decision, width) {
    // A seat's private reasoning, under the decision it led to: the spectator's alone. A seat
    // view never shows it, not even the seat's own (docs/claude-seat.md, "Who sees thinking").
    const attempts = [
      ...decision.rejected.map((rejection, n) => ["rejected reply " + (n + 1), rejection.thinking]),
      ["thinking", decision.thinking],
    ];
    return attempts.filter(([, blocks]) => blocks && blocks.length).map(([label, blocks]) => {
      const cell = el("td", { colspan: String(width) },
        el("span", { class: "mark reasoning", text: seatName(decision.slot) + " " + label }));
      for (const block of blocks) {
        cell.append(block.type === "redacted"
          ? el("div", { class: "thought redacted muted", text: "(redacted thinking)" })
          : el("div", { class: "thought", text: block.text }));
      }
      return el("tr", { class: "thinking", "data-slot": String(decision.slot) }, cell);
    });
  }

  function bidCells(row, bid, isRevealed) {
    row.append(el("td", { class: "action", text: "bids " + bidText(bid.quantity, bid.face) }));
    if (spectator()) {
      row.append(
        el("td", { class: "num p-bidder", text: prob(bid.p[bid.slot]) }),
        el("td", { class: "facer", text: bid.facer === null ? "–" : seatName(bid.facer) }),
        el("td", { class: "num p-facer", text: bid.facer === null ? "–" : prob(bid.p[bid.facer]) }),
      );
    } else {
      row.append(el("td", { class: "num p-seat", text: prob(bid.p[state.view]) }));
    }
    const truth = spectator() || isRevealed
      ? el("td", { class: bid.true ? "truth true" : "truth false",
        text: (bid.true ? "true" : "false") + " (" + bid.actual + ")" })
      : el("td", { class: "truth muted", text: "?" });
    row.append(truth);
  }

  function challengeCells(row, challenge) {
    const what = (challenge.forced ? "forced to challenge " : "challenges ") +
      seatName(challenge.bidder) + "'s " + bidText(challenge.quantity, challenge.face);
    row.append(el("td", { class: "action", text: what }));
    const outcome = "actual " + challenge.actual + ": " + seatName(challenge.winner) + " +1, " +
      seatName(challenge.loser) + " -1";
    const span = spectator() ? 4 : 2;
    row.append(el("td", { class: "outcome", colspan: String(span), text: outcome }));
  }

  function talkCell(decision) {
    const cell = el("td", { class: "talk" });
    if (decision.published !== null) cell.append(el("span", { class: "published", text: decision.published }));
    if (spectator() && decision.say && decision.say !== decision.published) {
      cell.append(el("div", { class: "said muted", text: "said: " + decision.say }));
    }
    return cell;
  }

  function notesCell(decision) {
    return el("td", { class: "notes", text: own(decision.slot) && decision.notes ? decision.notes : "" });
  }

  function marksCell(decision, faced) {
    const cell = el("td", { class: "marks" });
    const mark = (kind, text) => cell.append(el("span", { class: "mark " + kind, text }));
    if (decision.forced) mark("forced", "forced (bid cap)");
    if (!own(decision.slot)) return cell;
    if (decision.fallback) mark("fallback", "fallback (rule 11)");
    for (const rejection of decision.rejected) {
      mark("rejected", "rejected");
      cell.append(el("div", { class: "reason", text: rejection.reason }));
    }
    for (const fault of decision.faults) {
      mark("fault", "fault");
      cell.append(el("div", { class: "reason", text: fault }));
    }
    if (decision.grade) {
      // A grade reads the decider's own hand: shown to the spectator and to that seat alone.
      const g = decision.grade;
      const sign = { inaccuracy: "?!", mistake: "?", blunder: "??" }[g.grade];
      const why = "chance " + prob(g.chance) + " from its own hand; forgoes " +
        g.forgone.toFixed(3) + " expected points";
      cell.append(el("span", { class: "mark grade " + g.grade, title: why, text: sign + " " + g.grade }));
      cell.append(el("div", { class: "grade-why", text: why }));
    }
    for (const use of decision.usage) {
      cell.append(el("div", { class: "usage muted", text:
        "tokens in " + use.inputTokens + " out " + use.outputTokens +
        " cache read " + use.cacheReadTokens + " write " + use.cacheWriteTokens }));
    }
    const pair = decision.slot + "," + faced;
    if (spectator() && !decision.forced && faced !== null && flagged.has(pair)) {
      mark("flagged", "audit flag: " + flagged.get(pair));
    }
    return cell;
  }

  function renderReveal(current) {
    const box = $("reveal");
    box.replaceChildren();
    if (!current || current.type !== "challenge") return;
    const truth = current.actual >= current.quantity ? "true" : "false";
    box.append(el("p", { class: "revealed", text:
      "Revealed: " + current.actual + " showing " + current.face + "; the bid " +
      bidText(current.quantity, current.face) + " was " + truth + ". " +
      seatName(current.winner) + " wins the point." }));
  }

  // --- built once: the deal list and the audit -----------------------------------------------

  function buildDealList() {
    const head = ["deal", "opener", "bids", "challenge", "actual", "winner",
      ...slots.map((s) => "pts " + seatName(s))];
    $("deals").tHead.append(el("tr", null, ...head.map((c) => el("th", { text: c }))));
    const rows = document.createDocumentFragment();
    deals.forEach((deal, index) => {
      const end = deal.decisions[deal.decisions.length - 1];
      const ended = end && end.type === "challenge";
      const bids = deal.decisions.filter((d) => d.type === "bid").length;
      const row = el(
        "tr",
        { "data-deal": String(deal.deal) },
        el("td", { class: "num", text: String(deal.deal) }),
        el("td", { text: seatName(deal.opener) }),
        el("td", { class: "num after", text: String(bids) }),
        el("td", { class: "challenge after", text: ended
          ? (end.forced ? "forced " : "") + seatName(end.slot) + " on " + seatName(end.bidder) + "'s " +
            bidText(end.quantity, end.face)
          : "(unfinished)" }),
        el("td", { class: "num actual after", text: ended ? String(end.actual) : "" }),
        el("td", { class: "winner after", text: ended ? seatName(end.winner) : "" }),
        ...slots.map((s) => el("td", { class: "num pts after", "data-slot": String(s), text: signed(deal.pointsAfter[s]) })),
      );
      row.addEventListener("click", () => go(index, lastDecision(index)));
      rows.append(row);
    });
    $("deals").tBodies[0].append(rows);
  }

  function buildAudit() {
    const list = $("flags");
    if (!data.flags.length) list.append(el("li", { class: "muted", text: "no flags in the log's tail" }));
    for (const flag of data.flags) {
      const [a, b] = flag.slots || flag.policies || [];
      list.append(el("li", {
        class: "flag", "data-kind": flag.flag, "data-pair": a + "," + b,
        text: flag.flag + ": " + seatName(a) + " → " + seatName(b) + ", faced " + flag.faced.join("/") +
          ", bias " + flag.bias.map((x) => x.toFixed(3)).join("/") + " > " + flag.threshold,
      }));
    }
    const figures = $("figures");
    for (const failure of data.audit.failed) figures.append(el("p", { class: "reason", text: failure }));
    for (const [name, matrix] of Object.entries(data.audit.pairs)) {
      if (!Array.isArray(matrix)) continue;
      figures.append(el("h3", { text: name + "[a][b] (a faces b's bids)" }), matrixTable(name, matrix));
    }
    if (data.audit.readOut) {
      figures.append(el("h3", { text: "decisions: each seat against the exact odds of its own hand" }),
        readOutTable(data.audit.readOut));
    }
    for (const [name, row] of Object.entries(data.audit.seats)) {
      if (!Array.isArray(row)) continue;
      const table = el("table", { class: "figure", "data-figure": name });
      table.append(el("tr", null, el("th", { text: "seat" }), ...slots.map((s) => el("th", { class: "num", text: seatName(s) }))));
      table.append(el("tr", null, el("th", { text: name }), ...row.map((v) => el("td", { class: "num", text: cell(v) }))));
      figures.append(el("h3", { text: name }), table);
    }
  }

  function readOutTable(readOut) {
    // The decision read-out per seat (docs/decisions.md): the figures and grades of this log.
    const names = Object.keys(readOut[0].figures);
    const table = el("table", { class: "figure", "data-figure": "decisions" });
    table.append(el("tr", null, el("th", { text: "figure" }), ...slots.map((s) => el("th", { class: "num", text: seatName(s) }))));
    for (const name of names) {
      table.append(el("tr", null, el("th", { text: name }),
        ...readOut.map((seat) => el("td", { class: "num", text: cell(seat.figures[name]) }))));
    }
    for (const grade of ["inaccuracy", "mistake", "blunder"]) {
      table.append(el("tr", null, el("th", { text: grade + "s" }),
        ...readOut.map((seat) => el("td", { class: "num", text: String(seat.grades[grade]) }))));
    }
    return table;
  }

  function matrixTable(name, matrix) {
    const table = el("table", { class: "figure", "data-figure": name });
    table.append(el("tr", null, el("th", { text: "a \\ b" }), ...slots.map((s) => el("th", { class: "num", text: seatName(s) }))));
    matrix.forEach((values, a) => {
      table.append(el("tr", null, el("th", { text: seatName(a) }), ...values.map((v, b) => el("td", {
        class: flagged.has(a + "," + b) ? "num flagged" : "num", text: a === b ? "" : cell(v),
      }))));
    });
    return table;
  }

  const cell = (v) => (v === null ? "–" : Number.isInteger(v) ? String(v) : v.toFixed(3));

  // --- wiring --------------------------------------------------------------------------------

  function start() {
    $("title").textContent = (data.caution ? data.caution.toUpperCase() + " (not verified by arena check) · " : "") +
      header.mode + " · seed " + header.seed + " · replay";
    const result = data.result;
    $("summary").textContent = header.seats.length + " seats, " + deals.length + " of " + header.deals +
      " deals" + (header.talk ? ", talk on" : "") + (result ? ", " + result.status : ", no result line");
    if (result) $("summary").append(el("span", { class: "after", text: ", final points " + result.points.map(signed).join(" ") }));
    const view = $("view");
    view.append(el("option", { value: String(SPECTATOR), text: "spectator (everything)" }));
    for (const seat of header.seats) {
      view.append(el("option", { value: String(seat.slot), text: "as " + seatName(seat.slot) + " saw it (" + seat.policy + ")" }));
    }
    view.addEventListener("change", () => { state.view = Number(view.value); go(state.deal, state.decision); });
    buildDealList();
    buildAudit();
    $("next").addEventListener("click", next);
    $("prev").addEventListener("click", prev);
    $("next-deal").addEventListener("click", () => go(state.deal + 1, 0));
    $("prev-deal").addEventListener("click", () => go(state.deal - 1, 0));
    $("jump").addEventListener("submit", (event) => {
      event.preventDefault();
      const wanted = Number.parseInt($("jump-deal").value, 10);
      const index = deals.findIndex((deal) => deal.deal === wanted);
      if (index >= 0) go(index, 0);
    });
    document.addEventListener("keydown", (event) => {
      if (event.target.closest("input, select, textarea") || event.altKey || event.ctrlKey || event.metaKey) return;
      const actions = {
        ArrowRight: next, ArrowLeft: prev,
        ArrowDown: () => go(state.deal + 1, 0), PageDown: () => go(state.deal + 1, 0),
        ArrowUp: () => go(state.deal - 1, 0), PageUp: () => go(state.deal - 1, 0),
        Home: () => go(0, 0), End: () => go(lastDeal(), lastDecision(lastDeal())),
        g: () => $("jump-deal").focus(),
      };
      const action = actions[event.key];
      if (action) { event.preventDefault(); action(); }
    });
    window.addEventListener("hashchange", fromFragment);
    if (deals.length) fromFragment();
    document.body.dataset.ready = "1";
  }

  start();
})();
