// Keys for the queue, the page's own script (CSP script-src 'self'); the page works without it.
// j / k: next or previous card; a / r / l: choose approve, reject or later on that card
// (r puts the cursor in the card's reason; Esc leaves it). No key decides anything: only
// "Decide the chosen items…" (or a card's own button) and the confirmation after it do.
"use strict";
(function () {
  const CARD = "section.approval[data-approval-id]";
  const cards = () => Array.from(document.querySelectorAll(CARD));
  if (!cards().length) return;
  const hint = document.getElementById("keys-hint");
  if (hint) hint.hidden = false;
  const start = new URLSearchParams(window.location.search).get("at");
  let at = cards().findIndex((card) => card.dataset.approvalId === start);

  function show(index) {
    const all = cards();
    at = Math.max(0, Math.min(all.length - 1, index));
    const card = all[at];
    card.tabIndex = -1;
    card.focus();
    card.scrollIntoView({ block: "nearest" });
  }

  function choose(value) {
    const card = cards()[at];
    if (!card) return;
    const radio = card.querySelector(`input[type="radio"][value="${value}"]`);
    if (!radio || radio.disabled) return;
    radio.checked = true;
    const reason = card.querySelector("textarea");
    if (value === "reject" && reason) reason.focus();
  }

  function typing(target) {
    if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
    return target instanceof HTMLInputElement && !["radio", "checkbox"].includes(target.type);
  }

  const KEYS = {
    j: () => show(at + 1),
    k: () => show(at - 1),
    a: () => choose("approve"),
    r: () => choose("reject"),
    l: () => choose(""),
  };

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape" && event.target.closest(CARD)) show(at);
      return;
    }
    const act = KEYS[event.key];
    if (act) {
      event.preventDefault();
      act();
    }
  });

  // Keys act on the card a person is reading: the one focus (or a click) went into last.
  document.addEventListener("focusin", (event) => {
    const card = event.target.closest && event.target.closest(CARD);
    if (card) at = cards().indexOf(card);
  });
})();
