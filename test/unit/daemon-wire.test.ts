// The daemon's frames as the shim (native/shim/sriovctl_cni.cc) reads and writes them: fixed offsets, little
// endian, every length bounded before anything is allocated.
import { describe, expect, it } from 'vitest';
import {
  decodeEnv,
  decodeHello,
  decodeReplyHeader,
  decodeRequestHeader,
  encodeHello,
  encodeReply,
  encodeRequest,
  MAX_ENV_BYTES,
  RequestKind,
  StdinState,
  encodeSentBack,
  MAX_REASON_BYTES,
  Verdict,
} from '../../src/daemon/wire';

describe('daemon wire format', () => {
  it('a greeting: "SRVD", version 2, the verdict', () => {
    const b = encodeHello(Verdict.refused);
    expect([...b]).toEqual([0x53, 0x52, 0x56, 0x44, 2, 2, 0, 0]);
    expect(decodeHello(b)).toBe(Verdict.refused);
    expect(() => decodeHello(Buffer.from('SRVD\x03\x00\x00\x00', 'latin1'))).toThrow('protocol 3');
    expect(() => decodeHello(Buffer.from('HTTP/1.1', 'latin1'))).toThrow('not a sriovctl daemon');
  });

  it('a request round-trips, the kind and stdin state in bytes 4 and 5, the lengths at 8 and 12', () => {
    const b = encodeRequest({ kind: RequestKind.cni, env: { CNI_COMMAND: 'ADD', X: 'a=b' }, stdinState: StdinState.read, stdin: '{"é":1}' });
    expect(b.toString('latin1', 0, 4)).toBe('SRQ1');
    expect([b[4], b[5], b[6], b[7]]).toEqual([0, 0, 0, 0]);
    const h = decodeRequestHeader(b);
    expect(h).toEqual({ kind: RequestKind.cni, stdinState: StdinState.read, envLen: 'CNI_COMMAND=ADD\0X=a=b\0'.length, stdinLen: 8 });
    expect(decodeEnv(b.subarray(16, 16 + h.envLen))).toEqual({ CNI_COMMAND: 'ADD', X: 'a=b' });
    expect(b.toString('utf8', 16 + h.envLen)).toBe('{"é":1}');
    const status = encodeRequest({ kind: RequestKind.status, env: {}, stdinState: StdinState.tooLarge, stdin: '' });
    expect([status[4], status[5]]).toEqual([1, 1]);
  });

  it('a request header is refused naming what is wrong', () => {
    const head = (f: (b: Buffer) => void) => {
      const b = encodeRequest({ kind: RequestKind.cni, env: {}, stdinState: StdinState.read, stdin: '' });
      f(b);
      return () => decodeRequestHeader(b);
    };
    expect(head((b) => b.write('GET ', 0, 'latin1'))).toThrow('not a sriovctl request');
    expect(head((b) => (b[4] = 9))).toThrow('unknown request kind 9');
    expect(head((b) => (b[5] = 7))).toThrow('unknown stdin state 7');
    expect(head((b) => b.writeUInt32LE(MAX_ENV_BYTES + 1, 8))).toThrow(`at most ${MAX_ENV_BYTES}`);
    expect(head((b) => ((b[5] = StdinState.tooLarge), b.writeUInt32LE(5, 12)))).toThrow('a stdin body with a stdin state that has none');
  });

  it('an environment entry must have a name and the block must end in NUL', () => {
    expect(() => decodeEnv(Buffer.from('=x\0'))).toThrow('without a name');
    expect(() => decodeEnv(Buffer.from('A=1'))).toThrow('not NUL-terminated');
    expect(decodeEnv(Buffer.alloc(0))).toEqual({});
  });

  it('a reply: "SRP1", exit code, stdout and stderr lengths, then the bodies', () => {
    const b = encodeReply({ exitCode: 1, stdout: '{"code":7}\n', stderr: 'log\n' });
    expect(decodeReplyHeader(b)).toEqual({ exitCode: 1, stdoutLen: 11, stderrLen: 4 });
    expect(b.toString('utf8', 16)).toBe('{"code":7}\nlog\n');
  });

  it('a call sent back: "SRB1", the reason\'s length, two zero fields, the reason (bounded)', () => {
    const b = encodeSentBack('its CNI_PATH names /x');
    expect(b.toString('latin1', 0, 4)).toBe('SRB1');
    expect([b.readUInt32LE(4), b.readUInt32LE(8), b.readUInt32LE(12)]).toEqual([21, 0, 0]);
    expect(b.toString('utf8', 16)).toBe('its CNI_PATH names /x');
    expect(encodeSentBack('x'.repeat(MAX_REASON_BYTES + 10)).readUInt32LE(4)).toBe(MAX_REASON_BYTES);
  });
});
