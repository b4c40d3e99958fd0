/**
 * The ACS's pages in the customer's browser (ds-host): the challenge (a code), the 3DS Method
 * (a hidden iframe's document), and the hand-back that posts a form to Tender. Plain HTML that
 * works with script off (a button to press), one landmark, labelled fields (axe-clean).
 */

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string, script = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${esc(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;margin:2rem;color:#111;background:#fff}` +
  `input,button{font:inherit;padding:.4rem .6rem}button{background:#0b57d0;color:#fff;border:0;border-radius:4px}</style></head>` +
  `<body><main>${body}</main>${script ? `<script>${script}</script>` : ''}</body></html>`;

const hidden = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');

/** The challenge: the issuer asks for the code sent to the cardholder. */
export function challengePage(o: { acsTransID: string; session: string; merchant: string; amount: string; wrong?: boolean }) {
  return page(
    'Verify your payment',
    `<h1>Verify your payment</h1><p>${esc(o.merchant)}: ${esc(o.amount)}</p>` +
      `<p>Enter the code your bank sent you (in this test ACS: 123456).</p>` +
      `<form method="post" action="/acs/challenge/answer">${hidden({ acsTransID: o.acsTransID, threeDSSessionData: o.session })}` +
      `<p><label for="code">Code</label> <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required></p>` +
      `<p><button type="submit" name="action" value="submit">Verify</button> <button type="submit" name="action" value="cancel">Cancel</button></p></form>`,
  );
}

/** Posts `fields` to `url` (Tender's notificationURL, or its method notification), at once when script runs. */
export function handBackPage(title: string, url: string, fields: Record<string, string>) {
  return page(
    title,
    `<h1>${esc(title)}</h1><form id="back" method="post" action="${esc(url)}">${hidden(fields)}` +
      `<p><button type="submit">Continue</button></p></form>`,
    `document.getElementById('back').submit();`,
  );
}

/** A request the ACS cannot read (a bad CReq, an unknown transaction). */
export const errorPage = (why: string) => page('Verification failed', `<h1>Verification failed</h1><p>${esc(why)}</p>`);
