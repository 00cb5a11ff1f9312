/** Stock card images are drawn by the SPA as gradients by index (the server sends no URL). */
export function stockGradient(id: string): string {
  const index = Number.parseInt(id, 10);
  const n = Number.isFinite(index) ? index : 0;
  const hue = (n * 47) % 360;
  return `linear-gradient(135deg, hsl(${hue} 65% 55%), hsl(${(hue + 50) % 360} 60% 35%))`;
}
