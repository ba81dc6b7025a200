// upcheck AdminCP: progressive enhancement, nothing more.
//
// Every page works without this file. With it, the "Check for updates"
// form posts to the JSON API instead of reloading the page, tells the
// outcome in its live region, and then refreshes the navigation badge and
// the dashboard widget's numbers from the shared summary, and the parts
// the server words (the attention banner, the named components) from the
// page itself (refreshLive).
// Elements are found by their data-testid, the names the templates in
// views/ promise to keep. No inline script anywhere: the CSP forbids it.
(function () {
  "use strict";

  var SUMMARY_URL = "/api/admin/plugins/updates/summary";
  var RUNNING_POLL_MS = 10000;

  function byTestId(id, root) {
    return (root || document).querySelector('[data-testid="' + id + '"]');
  }

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") || "" : "";
  }

  function countNoun(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  function number(v) {
    return typeof v === "number" && isFinite(v) ? v : 0;
  }

  // tones is the JSON object in the outcome region's data-tones: the tone
  // of each check status (readmodel.CheckStatusText), of which this file
  // keeps no copy.
  function tones(el) {
    try {
      var w = JSON.parse(el.getAttribute("data-tones") || "{}");
      return w && typeof w === "object" ? w : {};
    } catch (e) {
      return {};
    }
  }

  // ---- Summary: badge, alert, widget ----

  // updateBadge shows a navigation badge's count in its own words
  // (data-one, data-many): "nav-attention-badge" beside Plugins, the
  // components that need attention; "nav-tree-badge" beside Packages, the
  // installed tree's items that do.
  function updateBadge(testId, n) {
    var badge = byTestId(testId);
    if (!badge) return;
    badge.hidden = n <= 0;
    badge.setAttribute("data-count", String(n));
    var count = badge.querySelector(".nav-badge-count");
    var text = badge.querySelector(".nav-badge-text");
    var words = countNoun(n, badge.getAttribute("data-one"), badge.getAttribute("data-many"));
    if (count) count.textContent = String(n);
    if (text) text.textContent = words;
    badge.title = words;
  }

  // refreshLive refetches the page and gives every [data-live] element
  // (the attention banner, the dashboard's named components, its oldest
  // success and next check) the content the server renders now, so their
  // words live in views/ alone. One whose text has not changed is left
  // alone, so screen readers are not told the banner again.
  function refreshLive() {
    var parts = document.querySelectorAll("[data-live]");
    if (!parts.length || !window.DOMParser) return Promise.resolve();
    return fetch(location.pathname + location.search, {
      headers: { Accept: "text/html" },
      credentials: "same-origin",
      cache: "no-store"
    }).then(function (res) {
      return res.ok ? res.text() : null;
    }).then(function (html) {
      if (!html) return;
      var page = new DOMParser().parseFromString(html, "text/html");
      parts.forEach(function (el) {
        var fresh = page.querySelector('[data-live="' + el.getAttribute("data-live") + '"]');
        if (fresh && fresh.textContent !== el.textContent) el.innerHTML = fresh.innerHTML;
      });
    }).catch(function () {
      // the page keeps what it showed; nothing to announce
    });
  }

  function setStat(id, n) {
    var value = byTestId(id);
    if (!value) return;
    value.textContent = String(n);
    var item = value.closest(".stat");
    if (!item) return;
    item.classList.toggle("stat-active", n > 0);
    var label = item.querySelector(".stat-label");
    if (label) label.textContent = n === 1 ? label.getAttribute("data-one") : label.getAttribute("data-many");
  }

  // setFeedStat shows a count only a feed gives (a number), or in its
  // place the words that the feed was never read (null).
  function setFeedStat(testId, unreadId, n) {
    var known = typeof n === "number";
    setStat(testId, number(n));
    var el = byTestId(testId);
    if (el && el.closest(".stat")) el.closest(".stat").hidden = !known;
    var unreadEl = byTestId(unreadId);
    if (unreadEl) unreadEl.hidden = known;
  }

  function applySummary(s) {
    var security = number(s.security_updates);
    var vulnerable = number(s.vulnerable);
    var stale = number(s.stale);
    updateBadge("nav-attention-badge", number(s.attention_total));
    // tree_counts is null while no tree was read: no badge then.
    updateBadge("nav-tree-badge", s.tree_counts ? number(s.tree_counts.total) : 0);

    var widget = byTestId("updates-widget");
    if (!widget) return;
    setStat("widget-components", number(s.components));
    // malicious is null until an OSV feed was read, known_exploited until
    // the KEV catalogue was: the widget says so instead of a count
    // (views.feedStat).
    setFeedStat("widget-malicious", "widget-malware-unread", s.malicious);
    setFeedStat("widget-exploited", "widget-exploited-unread", s.known_exploited);
    setStat("widget-updates", number(s.updates_available));
    setStat("widget-waiting", number(s.waiting));
    setStat("widget-security", security);
    setStat("widget-vulnerable", vulnerable);
    setStat("widget-trust-downgrades", number(s.trust_downgrades));
    setStat("widget-deprecated", number(s.deprecated));
    setStat("widget-failing", number(s.failing_sources));
    setStat("widget-untrusted", number(s.untrusted_sources));
    setStat("widget-unsigned", number(s.unsigned_sources));

    var staleEl = byTestId("widget-stale");
    if (staleEl) {
      staleEl.hidden = stale <= 0;
      staleEl.setAttribute("data-count", String(stale));
    }

    var running = !!s.check_running;
    widget.setAttribute("data-check-running", String(running));
    var runningEl = byTestId("widget-check-running");
    if (runningEl) runningEl.hidden = !running;
    if (running) watchRunning();
  }

  function summaryURL() {
    var widget = byTestId("updates-widget");
    return (widget && widget.getAttribute("data-summary-url")) || SUMMARY_URL;
  }

  function refreshSummary() {
    return fetch(summaryURL(), {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
      cache: "no-store"
    }).then(function (res) {
      if (!res.ok) return null;
      return res.json().then(function (s) {
        applySummary(s);
        return refreshLive().then(function () {
          return s;
        });
      });
    }).catch(function () {
      return null; // the page keeps what it showed; nothing to announce
    });
  }

  // watchRunning polls the summary while a check runs, so the widget shows
  // its results when it ends. One poll at a time.
  var watching = false;
  function watchRunning() {
    if (watching) return;
    watching = true;
    setTimeout(function poll() {
      refreshSummary().then(function (s) {
        var widget = byTestId("updates-widget");
        if (s && s.check_running && widget) {
          setTimeout(poll, RUNNING_POLL_MS);
        } else {
          watching = false;
        }
      });
    }, RUNNING_POLL_MS);
  }

  // ---- The check form ----

  // say writes the outcome into the live region; its tone (the notice's
  // colour) is the page's word for the status (data-tones, from
  // views.CheckOutcomeTone), "info" while there is none.
  function say(region, text, status) {
    var byStatus = tones(region);
    var tone = "info";
    if (status) tone = Object.prototype.hasOwnProperty.call(byStatus, status) ? byStatus[status] : "danger";
    sayTone(region, text, tone);
  }

  function sayTone(region, text, tone) {
    region.setAttribute("data-tone", tone);
    region.textContent = text;
  }

  // waitText is a wait of s seconds in the server's words: the region's
  // data-countdown (visible, "1 min 53 s") or data-countdown-spoken ("about
  // 2 minutes"), one word for each second of the cooldown in force
  // (readmodel.SecondsText, SpokenSecondsText).
  function waitText(region, name, s) {
    var list;
    try {
      list = JSON.parse(region.getAttribute(name) || "[]");
    } catch (e) {
      list = [];
    }
    if (!Array.isArray(list) || !list.length) return String(s);
    return list[Math.min(Math.max(s, 0), list.length - 1)];
  }

  // cooldown shows a countdown and gives the button back at zero. The
  // ticking number is hidden from screen readers, which would otherwise
  // hear it every second; they hear the wait once, and again when it ends.
  function cooldown(region, button, seconds, done) {
    var deadline = Date.now() + seconds * 1000;
    var count = document.createElement("span");
    count.setAttribute("data-testid", "check-countdown");
    count.setAttribute("data-seconds", String(seconds));
    count.textContent = waitText(region, "data-countdown", seconds);
    var visible = document.createElement("span");
    visible.setAttribute("aria-hidden", "true");
    visible.append("You can check again in ", count, ".");
    var spoken = document.createElement("span");
    spoken.className = "visually-hidden";
    spoken.textContent = "You can check again in " + waitText(region, "data-countdown-spoken", seconds) + ".";
    sayTone(region, "", "info");
    // The limit in words follows the cooldown in force (data-cooldown-text,
    // from views' cooldownSentence).
    region.append((region.getAttribute("data-cooldown-text") || "") + " ", visible, spoken);

    var timer = setInterval(function () {
      var left = Math.ceil((deadline - Date.now()) / 1000);
      if (left > 0) {
        count.setAttribute("data-seconds", String(left));
        count.textContent = waitText(region, "data-countdown", left);
        return;
      }
      clearInterval(timer);
      sayTone(region, "You can check for updates again.", "ok");
      done();
    }, 1000);
  }

  // retryAfter is the wait the answer names, or else the whole cooldown
  // in force (the region's data-cooldown-seconds).
  function retryAfter(res, body, region) {
    var s = number(body.retry_after);
    if (s <= 0) s = parseInt(res.headers.get("Retry-After") || "", 10);
    if (s > 0) return Math.ceil(s);
    s = parseInt(region.getAttribute("data-cooldown-seconds") || "", 10);
    return s > 0 ? s : 1;
  }

  function readJSON(res) {
    var type = res.headers.get("Content-Type") || "";
    if (type.indexOf("json") < 0) return Promise.resolve(null);
    return res.json().catch(function () {
      return null;
    });
  }

  function enhanceCheckForm(form) {
    var button = byTestId("check-button", form);
    var region = byTestId("check-outcome");
    if (!button || !region || !window.fetch) return;
    var busy = false;

    // aria-disabled rather than disabled: a disabled button drops keyboard
    // focus to the page; this one keeps it and ignores presses while busy.
    function setBusy(on) {
      busy = on;
      if (on) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (busy) return;
      setBusy(true);
      say(region, "Checking for updates…");

      fetch(form.getAttribute("data-api-url") || form.action, {
        method: "POST",
        headers: { "X-CSRF-Token": csrfToken(), Accept: "application/json" },
        credentials: "same-origin"
      }).then(function (res) {
        return readJSON(res).then(function (body) {
          if (res.status === 429) {
            cooldown(region, button, retryAfter(res, body || {}, region), function () {
              setBusy(false);
            });
          } else {
            setBusy(false);
            say(region, outcomeText(res, body), outcomeStatus(res, body));
          }
          return refreshSummary();
        });
      }, function () {
        setBusy(false);
        say(region, "The check could not run (network error). Try again later.", "error");
      });
    });
  }

  // outcomeStatus is the status the outcome's tone follows: the answer's,
  // "error" when there is no usable one.
  function outcomeStatus(res, body) {
    return (body && typeof body.status === "string" && body.status) || "error";
  }

  // outcomeText is the server's words for the answer (its message, the
  // sentence the dashboard shows without JavaScript); the page words only
  // an answer that carries none.
  function outcomeText(res, body) {
    if (body && typeof body.message === "string" && body.message) return body.message;
    if (res.ok && !body) {
      // Most likely the session ended and the request landed on the login page.
      return "The check could not run (unexpected response). Reload the page and try again.";
    }
    return "The check could not run (HTTP " + res.status + "). Try again later.";
  }

  // enhanceCopy shows the copy buttons (data-copy: the id of the read-only
  // field they copy); without this file the field's text is selectable.
  function enhanceCopy() {
    var buttons = document.querySelectorAll("button[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field || !navigator.clipboard) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        field.select();
        navigator.clipboard.writeText(field.value).then(function () {
          button.firstChild.nodeValue = "Copied";
        }, function () {
          button.firstChild.nodeValue = "Select and copy";
        });
      });
    });
  }

  function init() {
    enhanceCopy();
    var form = byTestId("check-form");
    if (form) enhanceCheckForm(form);
    var widget = byTestId("updates-widget");
    if (widget && widget.getAttribute("data-check-running") === "true" && window.fetch) watchRunning();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
