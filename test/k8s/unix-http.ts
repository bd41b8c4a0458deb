// A GET over a unix socket (Multus thick's daemon answers its shim there): whether it answers 200.
import { request } from 'node:http';

export function unixHttpOk(socketPath: string, path: string, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
