import type { Page } from 'playwright-core';

/**
 * The customer on a method's page in a real browser (docs/payment-methods.md): on the sandbox
 * page picks the bank when asked and the outcome (`Paid`, or `Authorized` for BNPL); on a card
 * form (amex) pays with the card; on the pay-now list picks `via` first. Waits until the browser
 * is back at `returnTo` (a prefix of the shop's URL).
 */
export async function payInBrowser(
  page: Page,
  url: string,
  opts: {
    returnTo: string;
    outcome?: 'Paid' | 'Authorized' | 'Cancelled' | 'Expired' | 'Failed';
    via?: RegExp;
    pan?: string;
    /** called once the method's page is ready, before the customer acts (an axe check) */
    check?: (page: Page) => Promise<void>;
  },
) {
  await page.goto(url);
  if (opts.via) await page.getByRole('button', { name: opts.via }).click();
  const bank = page.getByLabel('Choose your bank');
  const card = page.getByLabel('Card number');
  await Promise.race([page.getByRole('button', { name: /^(Paid|Authorized)$/ }).waitFor(), card.waitFor()]);
  await opts.check?.(page);
  if (await card.count()) {
    await card.fill(opts.pan ?? '378282246310005');
    await page.getByLabel('Expiry date').fill('12/34');
    await page.getByLabel('Security code').fill(opts.pan && !opts.pan.startsWith('3') ? '123' : '1234');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByRole('button', { name: /^Pay / }).click();
  } else {
    if (await bank.count()) await bank.selectOption('INGBNL2A');
    const bnpl = (await page.getByRole('button', { name: 'Authorized', exact: true }).count()) > 0;
    await page.getByRole('button', { name: opts.outcome ?? (bnpl ? 'Authorized' : 'Paid'), exact: true }).click();
  }
  await page.waitForURL((u) => u.href.startsWith(opts.returnTo));
}
