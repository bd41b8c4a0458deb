// NLMSG_ERROR (with extended-ack TLVs) → SysError, as the addon builds it for every failed request.
import { describe, expect, it } from 'vitest';
import { SysError } from '../../src/errors';
import { native } from '../../src/native';
import {
  IFLA_IFNAME,
  NLM_F_ACK,
  NLM_F_ACK_TLVS,
  NLM_F_CAPPED,
  NLM_F_REQUEST,
  NLMSG_DONE,
  NLMSG_ERROR,
  NLMSGERR_ATTR_MSG,
  NLMSGERR_ATTR_OFFS,
  RTM_NEWLINK,
  attr,
  cstr,
  i32,
  ifinfomsg,
  nlmsg,
  u32,
} from './net-wire-helpers';

const EEXIST = 17;
const ENODEV = 19;

const request = nlmsg(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 42, Buffer.concat([ifinfomsg(3), attr(IFLA_IFNAME, cstr('eth1'))]), 1234);

/** struct nlmsgerr { int error; struct nlmsghdr msg; } [+ echoed payload] + TLVs. */
function errorMessage(errno: number, opts: { capped: boolean; tlvs?: Buffer[] }): Buffer {
  const echoed = opts.capped ? request.subarray(0, 16) : request;
  const tlvs = opts.tlvs ?? [];
  const flags = (opts.capped ? NLM_F_CAPPED : 0) | (tlvs.length ? NLM_F_ACK_TLVS : 0);
  return nlmsg(NLMSG_ERROR, flags, 42, Buffer.concat([i32(-errno), echoed, ...tlvs]), 1234);
}

describe('netlink errors', () => {
  it('capped error with an extended-ack message → SysError with code, errno, op, kernelMessage', () => {
    const msg = errorMessage(EEXIST, { capped: true, tlvs: [attr(NLMSGERR_ATTR_MSG, cstr('Device name already in use')), attr(NLMSGERR_ATTR_OFFS, u32(32))] });
    const err = native.parseNetlinkError(msg, 'RTM_NEWLINK set name');
    expect(err).toBeInstanceOf(SysError);
    expect(err).toMatchObject({ code: 'EEXIST', errno: EEXIST, op: 'RTM_NEWLINK set name', kernelMessage: 'Device name already in use' });
    expect(err!.message).toBe('File exists');
    expect(err!.describe()).toBe('RTM_NEWLINK set name: File exists (EEXIST): Device name already in use');
  });

  it("describes a policy error in words, without our own code (that travels beside the text, for scripts)", () => {
    const busy = new SysError('eth7 is lent to cni:abc/net1', { code: 'BUSY', op: 'lend' });
    expect(busy.describe()).toBe('lend: eth7 is lent to cni:abc/net1');
    const gone = new SysError('no such device', { code: 'NOT_FOUND', op: 'give back', kernelMessage: 'Unknown device' });
    expect(gone.describe()).toBe('give back: no such device: Unknown device');
  });

  it('uncapped error: the TLVs follow the echoed request', () => {
    const msg = errorMessage(ENODEV, { capped: false, tlvs: [attr(NLMSGERR_ATTR_OFFS, u32(20)), attr(NLMSGERR_ATTR_MSG, cstr('Unknown device'))] });
    expect(native.parseNetlinkError(msg, 'RTM_GETLINK')).toMatchObject({ code: 'ENODEV', errno: ENODEV, kernelMessage: 'Unknown device' });
  });

  it('an error without TLVs has no kernelMessage', () => {
    const err = native.parseNetlinkError(errorMessage(ENODEV, { capped: true }), 'RTM_DELLINK');
    expect(err).toMatchObject({ code: 'ENODEV', op: 'RTM_DELLINK' });
    expect(err!.kernelMessage).toBeUndefined();
  });

  it('error 0 is an ack, not an error', () => {
    expect(native.parseNetlinkError(errorMessage(0, { capped: true }), 'RTM_NEWLINK')).toBeNull();
  });

  it('a failed dump: NLMSG_DONE carrying a negative error and its TLVs', () => {
    const done = nlmsg(NLMSG_DONE, NLM_F_ACK_TLVS, 7, Buffer.concat([i32(-22), attr(NLMSGERR_ATTR_MSG, cstr('Invalid header for link dump'))]));
    expect(native.parseNetlinkError(done, 'RTM_GETLINK dump')).toMatchObject({ code: 'EINVAL', errno: 22, kernelMessage: 'Invalid header for link dump' });
  });

  it('an error that is no errno (INT_MIN, positive, past MAX_ERRNO) is a malformed message, EBADMSG', () => {
    // found by the fuzz (test/fuzz/regressions): negating INT_MIN was undefined behaviour
    for (const error of [-0x80000000, 5, -4096]) {
      const msg = nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 42, Buffer.concat([i32(error), request.subarray(0, 16)]), 1234);
      expect(native.parseNetlinkError(msg, 'RTM_NEWLINK'), String(error)).toMatchObject({ code: 'EBADMSG' });
      const done = nlmsg(NLMSG_DONE, 0, 7, i32(error));
      expect(native.parseNetlinkError(done, 'dump'), String(error)).toEqual(error > 0 ? null : expect.objectContaining({ code: 'EBADMSG' }));
    }
  });
});
