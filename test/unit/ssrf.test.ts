import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressClass, isForbiddenAddress, isIpLiteral, isLocalName, parseIPv4, parseIPv6 } from '../../src/domain/ssrf.ts';

const forbidden: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'shared'],
  ['169.254.169.254', 'link-local'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.10', 'documentation'],
  ['198.18.0.1', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['[::1]', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
  ['::127.0.0.1', 'loopback'],
  // translation and tunnelling (IANA special-purpose): refused whatever the IPv4 address inside
  ['64:ff9b::7f00:1', 'translation'],
  ['64:ff9b::a9fe:a9fe', 'translation'],
  ['64:ff9b::808:808', 'translation'],
  ['64:ff9b:1::a00:1', 'translation'],
  ['64:ff9b:1:ffff::1', 'translation'],
  ['2001::1', 'translation'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'translation'],
  ['2002:7f00:1::', 'translation'],
  ['2002:808:808::1', 'translation'],
  ['192.88.99.1', 'translation'],
  ['100::1', 'reserved'],
  ['100:0:0:1::1', 'reserved'],
  ['2001:2::1', 'reserved'],
  ['2001:20::1', 'reserved'],
  ['2001:1ff::1', 'reserved'],
  ['2620:4f:8000::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['192.31.196.1', 'reserved'],
  ['192.52.193.1', 'reserved'],
  ['192.175.48.1', 'reserved'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.7', 'documentation'],
];

for (const [ip, cls] of forbidden) {
  test(`${ip} is ${cls}`, () => {
    assert.equal(addressClass(ip), cls);
    assert.equal(isForbiddenAddress(ip), true);
  });
}

const publicOnes = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.216.34',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.253.1.1',
  '11.0.0.1',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '2001:200::1',
  '64:ff9c::1',
  '2620:4f:8001::1',
  '3000::1',
  'fbff::1',
  'fe7f::1',
];
for (const ip of publicOnes) {
  test(`${ip} is public`, () => {
    assert.equal(addressClass(ip), undefined);
    assert.equal(isForbiddenAddress(ip), false);
  });
}

test('parses addresses strictly; anything else is not an IP literal', () => {
  assert.deepEqual(parseIPv4('192.168.0.1'), [192, 168, 0, 1]);
  for (const bad of ['256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.-4', 'a.b.c.d', '', '1..2.3'])
    assert.equal(parseIPv4(bad), undefined, bad);
  assert.deepEqual(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(parseIPv6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(parseIPv6('1::8'), [1, 0, 0, 0, 0, 0, 0, 8]);
  assert.deepEqual(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  for (const bad of ['1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', 'g::1', '12345::1', ':1::', '::ffff:1.2.3', 'example.com', '1.2.3.4'])
    assert.equal(parseIPv6(bad), undefined, bad);
  assert.equal(isIpLiteral('example.com'), false);
  assert.equal(isIpLiteral('10.0.0.1'), true);
  assert.equal(isIpLiteral('::1'), true);
  assert.equal(addressClass('example.com'), undefined);
});

test('localhost names are this machine', () => {
  for (const n of ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'localhost.localdomain']) assert.equal(isLocalName(n), true, n);
  for (const n of ['localhost.example.com', 'mylocalhost', 'example.com']) assert.equal(isLocalName(n), false, n);
});
