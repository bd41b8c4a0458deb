import { describe, expect, it } from 'vitest';
import { parsePciAddress, resolveNic } from '../../src/cli/nics';
import { CliError, ExitCode } from '../../src/cli/exit-codes';

describe('resolveNic', () => {
  it('PCI addresses, full or lspci-short, any case, become canonical', () => {
    expect(resolveNic('0000:03:00.1')).toEqual({ pci: '0000:03:00.1' });
    expect(resolveNic('0000:AF:1f.7')).toEqual({ pci: '0000:af:1f.7' });
    expect(resolveNic('03:00.1')).toEqual({ pci: '0000:03:00.1' });
    expect(parsePciAddress('0001:03:00.0')).toBe('0001:03:00.0');
  });

  it('anything else must be an interface name', () => {
    expect(resolveNic('enp3s0f1')).toEqual({ name: 'enp3s0f1' });
    for (const bad of ['', 'a/b', 'way-too-long-name0', '..', 'has space', '03:00.8']) {
      let err: unknown;
      try {
        resolveNic(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(ExitCode.usage);
      expect((err as CliError).message).toContain(`nic ${JSON.stringify(bad)}`);
    }
  });

  it('malformed PCI addresses are not PCI addresses', () => {
    for (const bad of ['0000:03:00.8', '000:03:00.1', '0000:03:00', '0000:0g:00.1']) expect(parsePciAddress(bad), bad).toBeNull();
  });
});
