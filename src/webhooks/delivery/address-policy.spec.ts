import fc from 'fast-check';
import { forbiddenRange } from './address-policy';

describe('forbiddenRange', () => {
  it.each([
    // IPv4, each range and its edges
    ['127.0.0.1', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['126.255.255.255', null],
    ['128.0.0.0', null],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['11.0.0.0', null],
    ['9.255.255.255', null],
    ['172.15.255.255', null],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', null],
    ['192.168.0.1', 'private'],
    ['192.167.255.255', null],
    ['192.169.0.0', null],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.169.253', 'link-local'],
    ['169.255.0.0', null],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['1.0.0.0', null],
    ['100.64.0.0', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.63.255.255', null],
    ['100.128.0.0', null],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['223.255.255.255', null],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.20.0.0', null],
    // documentation ranges stay public (see the table's comment)
    ['192.0.2.1', null],
    ['198.51.100.7', null],
    ['203.0.113.10', null],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
    // IPv6
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'private'],
    ['fc00::1', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::253', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['2606:4700:4700::1111', null],
    ['2001:db8::1', null],
    ['1:2:3:4:5:6:7::', 'reserved'],
    ['2a00:1450:4001:82b::200e', null],
    // IPv6 carrying an IPv4 address: judged by it
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::8.8.8.8', null],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::808:808', null],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:808:808::1', null],
  ])('%s -> %p', (address, expected) => {
    expect(forbiddenRange(address)).toBe(expected);
  });

  it.each(['localhost', '', '1.2.3', '0127.0.0.1', '[::1]', 'http://127.0.0.1/'])('refuses %p, which is not an IP address', (text) => {
    expect(() => forbiddenRange(text)).toThrow(TypeError);
  });

  it('finds every 10.x.y.z private', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(fc.property(octet, octet, octet, (x, y, z) => forbiddenRange(`10.${x}.${y}.${z}`) === 'private'));
  });

  it('judges an IPv4-mapped, NAT64 or 6to4 address as the IPv4 address it carries, in either spelling', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const [a, b, c, d] = v4.split('.').map(Number);
        const high = ((a << 8) | b).toString(16);
        const low = ((c << 8) | d).toString(16);
        const expected = forbiddenRange(v4);
        return (
          forbiddenRange(`::ffff:${v4}`) === expected &&
          forbiddenRange(`::ffff:${high}:${low}`) === expected &&
          forbiddenRange(`64:ff9b::${high}:${low}`) === expected &&
          forbiddenRange(`2002:${high}:${low}::1`) === expected
        );
      }),
    );
  });
});
