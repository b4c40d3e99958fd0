// The AReq's browser fields from the hosted card form (issue 43): the script's measurements when
// they all came and read well, else the request headers' fallbacks (src/domain/browser-fields.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserFields } from '../../src/domain/browser-fields.ts';

const headers = { accept: 'text/html', user_agent: 'Mozilla/5.0', accept_language: 'nl-NL,nl;q=0.9,en;q=0.8' };
const measured = {
  browser_javascript: 'true',
  browser_java: 'false',
  browser_color_depth: '24',
  browser_screen_height: '1080',
  browser_screen_width: '1920',
  browser_tz: '-60',
  browser_language: 'en-GB',
};

test("the script's measurements: screen, colour depth, time zone, Java and the page's language", () => {
  assert.deepEqual(browserFields(measured, headers, '192.0.2.7'), {
    ip: '192.0.2.7',
    accept: 'text/html',
    user_agent: 'Mozilla/5.0',
    language: 'en-GB',
    javascript: true,
    java: false,
    color_depth: 24,
    screen_height: 1080,
    screen_width: 1920,
    tz: -60,
  });
  assert.equal(browserFields({ ...measured, browser_color_depth: '30' }, headers, undefined).color_depth, 24, 'the next lower EMV depth');
  assert.equal(browserFields({ ...measured, browser_java: 'true' }, headers, undefined).java, true);
  assert.equal(browserFields({ ...measured, browser_language: 'not a tag!' }, headers, undefined).language, 'nl-NL', "the header's");
});

test('no script, or measurements that do not read: the request headers, javascript false, no screen', () => {
  const fallback = { ip: '192.0.2.7', accept: 'text/html', user_agent: 'Mozilla/5.0', language: 'nl-NL', javascript: false };
  assert.deepEqual(browserFields({}, headers, '192.0.2.7'), fallback);
  for (const bad of [
    { browser_screen_width: '' },
    { browser_screen_height: '1e3' },
    { browser_tz: '900' },
    { browser_color_depth: 'deep' },
    { browser_javascript: 'false' },
  ])
    assert.deepEqual(browserFields({ ...measured, ...bad }, headers, '192.0.2.7'), fallback, JSON.stringify(bad));
  assert.deepEqual(browserFields({}, {}, undefined), { javascript: false });
});
