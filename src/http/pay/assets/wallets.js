// Wallet buttons of the hosted payment page (served as /pay/assets/wallets.js, script-src 'self').
// A device wallet button stays hidden unless this browser can pay with that wallet. The
// sandbox wallet sheets of test projects are plain forms and need no script.
(function () {
  'use strict';
  if (window.__tenderWallets) return;
  window.__tenderWallets = true;

  function browserInfo() {
    return {
      browser_info_screen_width: window.screen.width,
      browser_info_screen_height: window.screen.height,
      browser_info_color_depth: window.screen.colorDepth,
      browser_info_user_agent: navigator.userAgent,
      browser_info_time_zone_offset: new Date().getTimezoneOffset(),
      browser_info_language: navigator.language || 'en',
      browser_info_java_enabled: false,
    };
  }

  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    }).then(function (res) {
      return res.json().then(function (json) {
        return { ok: res.ok, body: json };
      });
    });
  }

  function showError(el, text) {
    var p = el.querySelector('[data-wallet-error]');
    if (p) {
      p.textContent = text;
      p.hidden = false;
    }
  }

  // A refused billing address from the wallet (error.field billingContact… or billingAddress…):
  // the wallet's field that is wrong, or '' when the wallet handed over none.
  function billingField(result) {
    var err = result && result.body && result.body.error;
    var m = err && /^billing(?:Contact|Address)(?:\.(\w+))?$/.exec(err.field || '');
    return m ? { name: m[1] || '', code: err.code } : null;
  }

  // What the page says when the payment did not go through: why, when it was the billing address.
  function failureText(cfg, result) {
    var field = billingField(result);
    var b = cfg.billing_text;
    if (!field || !b) return cfg.error_text;
    var label = field.name && b.labels && b.labels[field.name] ? ' (' + b.labels[field.name] + ')' : '';
    return (field.code === 'billing_required' ? b.missing : b.invalid).replace('{field}', label);
  }

  function readConfig(el) {
    try {
      return JSON.parse(el.getAttribute('data-config'));
    } catch (e) {
      return null;
    }
  }

  // the order's data for the wallet's sheet
  function fetchWallet(cfg) {
    return fetch(cfg.config_url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(function (res) {
      return res.ok ? res.json() : Promise.reject(new Error('no wallet configuration'));
    });
  }

  // wallet-b-pay through the browser's Payment Request API: no third-party script.
  function setUpWalletB(el) {
    var cfg = readConfig(el);
    if (typeof window.PaymentRequest !== 'function' || !cfg) return;
    fetchWallet(cfg)
      .then(function (wallet) {
        var methods = [{ supportedMethods: wallet.supported_methods, data: wallet.payment_data_request }];
        var details = { total: { label: wallet.label, amount: { currency: wallet.currency, value: wallet.amount } } };
        var newRequest = function () {
          return new window.PaymentRequest(methods, details);
        };
        return newRequest()
          .canMakePayment()
          .then(function (can) {
            if (!can) return;
            el.hidden = false;
            var button = el.querySelector('button');
            button.addEventListener('click', function () {
              button.disabled = true;
              var request = newRequest();
              request
                .show()
                .then(function (response) {
                  var data = response.details || {};
                  var method = data.paymentMethodData || {};
                  var token = method.tokenizationData && method.tokenizationData.token;
                  var body = browserInfo();
                  body.csrf = cfg.csrf;
                  body.walletBPayMessage = token;
                  if (cfg.transaction_id) body.transaction_id = cfg.transaction_id;
                  // asked for when the order needs it (the config's billingAddressRequired)
                  if (method.info && method.info.billingAddress) body.billingAddress = method.info.billingAddress;
                  return postJson(cfg.pay_url, body).then(function (result) {
                    return response.complete(result.ok ? 'success' : 'fail').then(function () {
                      if (result.body && result.body.redirect_url) window.location.assign(result.body.redirect_url);
                      else showError(el, failureText(cfg, result));
                    });
                  });
                })
                .catch(function () {
                  // the customer closed the sheet, or the wallet refused: the page stays as it is
                })
                .then(function () {
                  button.disabled = false;
                });
            });
          });
      })
      .catch(function () {
        // no wallet on this device: the button stays hidden
      });
  }

  // wallet-a-pay through the browser's own wallet session API (present only where the device
  // can pay): merchant validation through us, then the token to our pay step.
  function setUpWalletA(el) {
    var Session = window.ApplePaySession;
    var cfg = readConfig(el);
    if (typeof Session !== 'function' || !cfg) return;
    try {
      if (!Session.supportsVersion(3) || !Session.canMakePayments()) return;
    } catch (e) {
      return;
    }
    fetchWallet(cfg)
      .then(function (wallet) {
        el.hidden = false;
        var button = el.querySelector('button');
        button.addEventListener('click', function () {
          button.disabled = true;
          // the session must be made in the click handler itself
          var session = new Session(wallet.version, wallet.payment_request);
          var extra = function (body) {
            body.csrf = cfg.csrf;
            if (cfg.transaction_id) body.transaction_id = cfg.transaction_id;
            return body;
          };
          var abort = function () {
            session.abort();
            button.disabled = false;
            showError(el, cfg.error_text);
          };
          session.onvalidatemerchant = function (event) {
            postJson(cfg.session_url, extra({ validationUrl: event.validationURL })).then(function (result) {
              if (result.ok) session.completeMerchantValidation(result.body.sessionData);
              else abort();
            }, abort);
          };
          session.onpaymentauthorized = function (event) {
            var body = extra(browserInfo());
            body.paymentToken = event.payment.token;
            // asked for when the order needs it (the payment request's requiredBillingContactFields)
            if (event.payment.billingContact) body.billingContact = event.payment.billingContact;
            postJson(cfg.pay_url, body).then(
              function (result) {
                var paid = result.ok && result.body && result.body.is_successful;
                var outcome = { status: paid ? Session.STATUS_SUCCESS : Session.STATUS_FAILURE };
                var field = billingField(result);
                var text = failureText(cfg, result);
                // a refused billing address: the wallet's sheet points at the field, so the
                // customer can correct it there and pay again
                if (field && typeof window.ApplePayError === 'function') {
                  var contactField = !field.name
                    ? 'postalAddress'
                    : field.name === 'givenName' || field.name === 'familyName'
                      ? 'name'
                      : field.name;
                  outcome.errors = [new window.ApplePayError('billingContactInvalid', contactField, text)];
                }
                session.completePayment(outcome);
                if (result.body && result.body.redirect_url) window.location.assign(result.body.redirect_url);
                else showError(el, text);
              },
              function () {
                session.completePayment({ status: Session.STATUS_FAILURE });
                showError(el, cfg.error_text);
              },
            );
          };
          session.oncancel = function () {
            button.disabled = false;
          };
          session.begin();
        });
      })
      .catch(function () {
        // no wallet on this device: the button stays hidden
      });
  }

  function start() {
    var a = document.querySelectorAll('[data-wallet="wallet-a-pay"]');
    for (var i = 0; i < a.length; i++) setUpWalletA(a[i]);
    var b = document.querySelectorAll('[data-wallet="wallet-b-pay"]');
    for (var j = 0; j < b.length; j++) setUpWalletB(b[j]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
