// Help while typing on the hosted card form (served as /pay/assets/checkout.js, script-src 'self').
// The form works without it: the server checks every field again and answers with POST/redirect/GET.
// Brand rules are the vault's own, inserted by the server (domain/card.ts brandRules()).
(function () {
  'use strict';
  var RULES = /*BRAND_RULES*/ null;

  // The browser as EMV 3-D Secure's AReq describes it, posted with the card (browser_* fields);
  // without script the server sends the request headers' fallbacks instead.
  function measure(form) {
    var s = window.screen || {};
    var java = false;
    try {
      java = typeof navigator.javaEnabled === 'function' && navigator.javaEnabled();
    } catch (e) {
      java = false;
    }
    var fields = {
      browser_javascript: 'true',
      browser_java: String(!!java),
      browser_color_depth: String(s.colorDepth || ''),
      browser_screen_height: String(s.height || ''),
      browser_screen_width: String(s.width || ''),
      browser_tz: String(new Date().getTimezoneOffset()),
      browser_language: navigator.language || '',
    };
    Object.keys(fields).forEach(function (k) {
      var input = form.querySelector('input[name="' + k + '"]');
      if (!input) {
        input = document.createElement('input');
        input.type = 'hidden';
        input.name = k;
        form.appendChild(input);
      }
      input.value = fields[k];
    });
  }

  function digits(s) {
    return String(s || '').replace(/\D/g, '');
  }

  function matches(pan, pattern) {
    if (typeof pattern === 'number') {
      var p = String(pattern);
      return pan.length >= p.length ? pan.slice(0, p.length) === p : p.slice(0, pan.length) === pan;
    }
    var lo = String(pattern[0]);
    var hi = String(pattern[1]);
    var head = pan.slice(0, lo.length);
    if (head.length < lo.length) return head >= lo.slice(0, head.length) && head <= hi.slice(0, head.length);
    return Number(head) >= pattern[0] && Number(head) <= pattern[1];
  }

  // The brand of a (partial) number: the co-badged ranges first, then the rule whose matching
  // prefix is the longest (the most specific), as credit-card-type does.
  function brandOf(pan) {
    if (!RULES || !pan) return null;
    for (var c = 0; c < RULES.coBadges.length; c++) {
      if (pan.length >= 16 && pan.indexOf(RULES.coBadges[c].prefix) === 0) {
        var first = RULES.coBadges[c].brands[0];
        for (var k = 0; k < RULES.brands.length; k++)
          if (RULES.brands[k].brand === RULES.coBadges[c].brands[1]) return withName(RULES.brands[k], first);
      }
    }
    var best = null;
    var bestLen = -1;
    for (var i = 0; i < RULES.brands.length; i++) {
      var b = RULES.brands[i];
      for (var j = 0; j < b.patterns.length; j++) {
        var pat = b.patterns[j];
        var len = String(typeof pat === 'number' ? pat : pat[0]).length;
        if (matches(pan, pat) && pan.length >= Math.min(len, 1) && len > bestLen) {
          best = b;
          bestLen = len;
        }
      }
    }
    return best;
  }

  function withName(rule, brand) {
    return {
      brand: brand,
      name: brand === 'cartes_bancaires' ? 'Cartes Bancaires' : rule.name,
      patterns: rule.patterns,
      lengths: rule.lengths,
      gaps: rule.gaps,
      cvc: rule.cvc,
    };
  }

  function luhn(pan) {
    var sum = 0;
    for (var i = 0; i < pan.length; i++) {
      var d = pan.charCodeAt(pan.length - 1 - i) - 48;
      if (i % 2 === 1) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    return sum % 10 === 0;
  }

  function group(pan, gaps) {
    var out = '';
    for (var i = 0; i < pan.length; i++) {
      if (i && gaps.indexOf(i) !== -1) out += ' ';
      out += pan[i];
    }
    return out;
  }

  function setUp(form) {
    var msg = {};
    try {
      msg = JSON.parse(form.getAttribute('data-messages')) || {};
    } catch (e) {
      return;
    }
    var el = function (id) {
      return form.querySelector('#' + id);
    };
    var pan = el('pan');
    var expiry = el('expiry');
    var cvc = el('cvc');
    var name = el('name');
    var brandOut = el('pan-brand');
    var cvcHint = el('cvc-hint');
    var button = form.querySelector('button[type=submit]');
    // the brand marks of the form's panel: the typed number's brand stands out, the others fade
    var scope = form.closest('section, details') || form;
    var marks = scope.querySelectorAll('.brands');
    function markBrand(brand) {
      for (var m = 0; m < marks.length; m++) {
        if (brand) marks[m].setAttribute('data-typed', '');
        else marks[m].removeAttribute('data-typed');
        var items = marks[m].querySelectorAll('[data-brand]');
        for (var n = 0; n < items.length; n++) {
          if (items[n].getAttribute('data-brand') === brand) items[n].setAttribute('data-current', '');
          else items[n].removeAttribute('data-current');
        }
      }
    }
    if (!pan || !expiry || !cvc || !name || !button) return;
    var touched = {};

    function currentBrand() {
      return brandOf(digits(pan.value));
    }

    var rules = {
      pan: function () {
        var p = digits(pan.value);
        if (!p) return 'pan_required';
        if (p.length < 12 || p.length > 19 || /[^\d\s-]/.test(pan.value)) return 'pan_format';
        if (!luhn(p)) return 'pan_luhn';
        var b = brandOf(p);
        if (!b || b.lengths.indexOf(p.length) === -1) return 'pan_brand';
        return '';
      },
      expiry: function () {
        var v = expiry.value.trim();
        if (!v) return 'expiry_required';
        var m = /^(\d{1,2})\s*[/.\- ]\s*(\d{2}|\d{4})$/.exec(v) || /^(\d{2})(\d{2}|\d{4})$/.exec(v);
        if (!m || Number(m[1]) < 1 || Number(m[1]) > 12) return 'expiry_format';
        // a card past its month is refused here, before the payment is tried (the issuer would decline it)
        var year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
        var now = new Date();
        if (year * 12 + Number(m[1]) < now.getFullYear() * 12 + now.getMonth() + 1) return 'expiry_past';
        return '';
      },
      cvc: function () {
        var v = cvc.value.trim();
        if (!v) return 'cvc_required';
        var amex = (currentBrand() || {}).brand === 'amex';
        if (!(amex ? /^\d{4}$/ : /^\d{3}$/).test(v)) return amex ? 'cvc_format_amex' : 'cvc_format';
        return '';
      },
      name: function () {
        var v = name.value.trim();
        if (!v) return 'name_required';
        if (v.length > 120) return 'name_too_long';
        return '';
      },
    };

    // Shows (or clears) the error of one field, next to it, as the server would render it.
    function show(input, code) {
      var id = input.id + '-error';
      var p = el(id);
      var described = (input.getAttribute('aria-describedby') || '').split(' ').filter(function (x) {
        return x && x !== id;
      });
      if (code) {
        if (!p) {
          p = document.createElement('p');
          p.className = 'field-error';
          p.id = id;
          input.parentNode.appendChild(p);
        }
        p.textContent = msg[code] || code;
        described.push(id);
        input.setAttribute('aria-invalid', 'true');
      } else {
        if (p) p.parentNode.removeChild(p);
        input.removeAttribute('aria-invalid');
      }
      if (described.length) input.setAttribute('aria-describedby', described.join(' '));
      else input.removeAttribute('aria-describedby');
    }

    function check(input) {
      var code = rules[input.id]();
      show(input, code);
      return code;
    }

    function onPan() {
      var p = digits(pan.value).slice(0, 19);
      var b = brandOf(p);
      var atEnd = pan.selectionStart === pan.value.length;
      var grouped = group(p, b ? b.gaps : [4, 8, 12, 16]);
      if (pan.value !== grouped && (atEnd || !/[^\d\s]/.test(pan.value))) {
        pan.value = grouped;
        if (atEnd) pan.setSelectionRange(grouped.length, grouped.length);
      }
      if (brandOut) brandOut.textContent = b ? b.name : '';
      pan.setAttribute('data-brand', b ? b.brand : '');
      markBrand(b ? b.brand : '');
      var size = b && b.brand === 'amex' ? 4 : 3;
      cvc.setAttribute('maxlength', String(size));
      if (cvcHint) cvcHint.textContent = size === 4 ? msg.cvc_hint_amex : msg.cvc_hint;
    }

    function onExpiry(event) {
      var deleting = event && event.inputType && event.inputType.indexOf('delete') === 0;
      var d = digits(expiry.value);
      if (d.length === 1 && d > '1') d = '0' + d;
      if (deleting) return;
      if (d.length >= 2 && !/\d{1,2}\s*\/\s*\d{4}$/.test(expiry.value)) expiry.value = d.slice(0, 2) + '/' + d.slice(2, 4);
    }

    pan.addEventListener('input', onPan);
    expiry.addEventListener('input', onExpiry);
    [pan, expiry, cvc, name].forEach(function (input) {
      // validated when the customer leaves the field; an error shown goes as soon as the field is right
      input.addEventListener('blur', function () {
        if (input.value.trim() || touched[input.id]) {
          touched[input.id] = true;
          check(input);
        }
      });
      input.addEventListener('input', function () {
        if (input.getAttribute('aria-invalid') === 'true' && !rules[input.id]()) show(input, '');
      });
    });

    form.addEventListener('submit', function (event) {
      if (form.getAttribute('aria-busy') === 'true') {
        event.preventDefault();
        return;
      }
      var first = null;
      [pan, expiry, cvc, name].forEach(function (input) {
        if (check(input) && !first) first = input;
      });
      if (first) {
        event.preventDefault();
        first.focus();
        return;
      }
      measure(form);
      form.setAttribute('aria-busy', 'true');
      button.disabled = true;
      button.textContent = msg.busy;
    });
    // Back to a page kept in memory: the button works again.
    window.addEventListener('pageshow', function () {
      form.removeAttribute('aria-busy');
      button.disabled = false;
      button.textContent = button.getAttribute('data-label') || button.textContent;
    });
    if (pan.value) onPan();
  }

  // The waiting page: asks for the order's outcome every few seconds, reloads when it changed.
  function poll(el) {
    var url = el.getAttribute('data-poll');
    var now = el.getAttribute('data-outcome');
    var tries = 0;
    function next() {
      if (++tries > 100) return;
      setTimeout(function () {
        fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
          .then(function (res) {
            return res.ok ? res.json() : null;
          })
          .then(function (body) {
            if (body && body.outcome && body.outcome !== now) window.location.reload();
            else next();
          }, next);
      }, 3000);
    }
    next();
  }

  // Copy buttons of a transfer's details: shown only here, where they can work; the text stays selectable.
  function copyButton(button) {
    var source = document.getElementById(button.getAttribute('data-copy'));
    if (!source || !navigator.clipboard) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = source.getAttribute('data-copy-value') || source.textContent.trim();
      navigator.clipboard.writeText(text).then(function () {
        button.textContent = button.getAttribute('data-copied') || label;
        setTimeout(function () {
          button.textContent = label;
        }, 2000);
      });
    });
  }

  function start() {
    var copies = document.querySelectorAll('button[data-copy]');
    for (var c = 0; c < copies.length; c++) copyButton(copies[c]);
    var forms = document.querySelectorAll('form[data-card-form]');
    for (var i = 0; i < forms.length; i++) setUp(forms[i]);
    var waiting = document.querySelectorAll('[data-poll]');
    for (var j = 0; j < waiting.length; j++) poll(waiting[j]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
