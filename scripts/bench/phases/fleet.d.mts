export interface FleetRow {
  key: string;
  figure: string;
  notes?: string;
  result: string;
  p50?: number;
  p95?: number;
  data?: Record<string, unknown>;
}
export function fleet(cfg: Record<string, number>, log: (line: string) => void): Promise<FleetRow[]>;
