import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressPolicy, embeddedIpv4, inCidr, parseCidr, parseIp } from '../../server/webhooks/address-policy.ts';

test('IPv4 literals parse as dotted decimal only', () => {
  assert.deepEqual(parseIp('127.0.0.1'), { family: 4, bytes: [127, 0, 0, 1] });
  assert.deepEqual(parseIp('255.255.255.255'), { family: 4, bytes: [255, 255, 255, 255] });
  for (const bad of ['256.0.0.1', '127.1', '2130706433', '0x7f.0.0.1', '017.0.0.1', '1.2.3.4.5', '1.2.3.', '', 'localhost', ' 1.2.3.4'])
    assert.equal(parseIp(bad), null, bad);
});

test('IPv6 literals parse with compression, brackets, zones and an IPv4 tail', () => {
  assert.deepEqual(parseIp('::1')?.bytes, [...new Array(15).fill(0), 1]);
  assert.deepEqual(parseIp('::')?.bytes, new Array(16).fill(0));
  assert.deepEqual(parseIp('[fd00:ec2::254]')?.bytes, [0xfd, 0, 0x0e, 0xc2, ...new Array(10).fill(0), 0x02, 0x54]);
  assert.deepEqual(parseIp('::ffff:169.254.169.254')?.bytes, [...new Array(10).fill(0), 0xff, 0xff, 169, 254, 169, 254]);
  assert.deepEqual(parseIp('fe80::1%eth0')?.bytes.slice(0, 2), [0xfe, 0x80]);
  assert.deepEqual(parseIp('1:2:3:4:5:6:7:8')?.bytes, [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
  for (const bad of ['1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'g::1', ':::', '1.2.3.4::', '::1.2.3'])
    assert.equal(parseIp(bad), null, bad);
});

test('CIDR ranges match on their prefix bits and family', () => {
  const ten = parseCidr('10.0.0.0/8');
  assert.ok(inCidr(parseIp('10.255.1.2')!, ten));
  assert.ok(!inCidr(parseIp('11.0.0.1')!, ten));
  const odd = parseCidr('172.16.0.0/12');
  assert.ok(inCidr(parseIp('172.31.255.255')!, odd));
  assert.ok(!inCidr(parseIp('172.32.0.0')!, odd));
  assert.ok(inCidr(parseIp('fe80::abcd')!, parseCidr('fe80::/10')));
  assert.ok(inCidr(parseIp('febf::1')!, parseCidr('fe80::/10')));
  assert.ok(!inCidr(parseIp('fec0::1')!, parseCidr('fe80::/10')));
  assert.ok(!inCidr(parseIp('::ffff:10.0.0.1')!, ten), 'families differ');
  assert.ok(inCidr(parseIp('1.2.3.4')!, parseCidr('0.0.0.0/0')));
  assert.ok(inCidr(parseIp('192.168.1.7')!, parseCidr('192.168.1.7')), 'a bare address is a /32');
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/8/1', 'ten/8', '10.0.0.0/-1', '10.0.0.0/'])
    assert.throws(() => parseCidr(bad), /not a CIDR/, bad);
});

test('IPv4-mapped, -translated and NAT64 addresses reveal their IPv4 address', () => {
  assert.deepEqual(embeddedIpv4(parseIp('::ffff:7f00:1')!), { family: 4, bytes: [127, 0, 0, 1] });
  assert.deepEqual(embeddedIpv4(parseIp('::ffff:0:169.254.169.254')!)?.bytes, [169, 254, 169, 254]);
  assert.deepEqual(embeddedIpv4(parseIp('64:ff9b::a9fe:a9fe')!)?.bytes, [169, 254, 169, 254]);
  assert.equal(embeddedIpv4(parseIp('2001:db8::1')!), null);
  assert.equal(embeddedIpv4(parseIp('10.0.0.1')!), null);
});

test('the default policy allows loopback, LAN and public addresses and always refuses metadata, link-local, multicast and unspecified', () => {
  const policy = new AddressPolicy({ allow: [], deny: [] });
  for (const ok of [
    '127.0.0.1',
    '::1',
    '10.1.2.3',
    '192.168.0.10',
    '172.20.0.1',
    'fd12::1',
    '93.184.216.34',
    '2606:4700::1',
    '::ffff:127.0.0.1',
  ])
    assert.ok(policy.allows(ok), ok);
  for (const refused of [
    '169.254.169.254',
    '169.254.0.1',
    'fd00:ec2::254',
    '[fd00:ec2::254]',
    'fe80::1',
    'fe80::1%eth0',
    '224.0.0.1',
    '239.255.255.250',
    'ff02::1',
    '0.0.0.0',
    '0.1.2.3',
    '::',
    '255.255.255.255',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:0.0.0.0',
    '::ffff:224.0.0.1',
    '64:ff9b::169.254.169.254',
    '::ffff:0:169.254.169.254',
    'localhost',
    'not an address',
  ])
    assert.ok(!policy.allows(refused), refused);
});

test('an allow list admits only its ranges; a deny list narrows; neither can open the always-refused ranges', () => {
  const allow = new AddressPolicy({ allow: ['10.1.2.0/24', '169.254.0.0/16'], deny: [] });
  assert.ok(allow.allows('10.1.2.3'));
  assert.ok(allow.allows('::ffff:10.1.2.3'), 'a mapped form of an allowed address');
  assert.ok(!allow.allows('10.9.9.9'));
  assert.ok(!allow.allows('127.0.0.1'));
  assert.ok(!allow.allows('169.254.169.254'), 'metadata stays refused');

  const deny = new AddressPolicy({ allow: [], deny: ['127.0.0.0/8', '::1/128', '192.168.0.0/16'] });
  assert.ok(!deny.allows('127.0.0.1'));
  assert.ok(!deny.allows('::ffff:127.0.0.1'), 'the mapped form is denied too');
  assert.ok(!deny.allows('64:ff9b::7f00:1'), 'and the NAT64 form');
  assert.ok(!deny.allows('::1'));
  assert.ok(!deny.allows('192.168.4.4'));
  assert.ok(deny.allows('10.0.0.1'));

  assert.throws(() => new AddressPolicy({ allow: ['10.0.0.0/40'], deny: [] }), /not a CIDR/);
});
