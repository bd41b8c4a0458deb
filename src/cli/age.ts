// How long ago, as kubectl prints an AGE: the two largest units ("45s", "3m12s", "5h3m", "2d4h").
export function ageOf(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '?';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  const [d, h, m] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60)];
  if (d > 0) return `${d}d${h ? `${h}h` : ''}`;
  if (h > 0) return `${h}h${m ? `${m}m` : ''}`;
  if (m > 0) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${s}s`;
}
