/** A Hetzner location as `GET /locations` answers it. */
export interface LocationJson {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly country: string;
  readonly city: string;
  readonly latitude: number;
  readonly longitude: number;
  readonly network_zone: string;
}

export const LOCATIONS: readonly LocationJson[] = [
  location(1, 'fsn1', 'Falkenstein DC Park 1', 'DE', 'Falkenstein', 50.47612, 12.370071),
  location(2, 'nbg1', 'Nuremberg DC Park 1', 'DE', 'Nuremberg', 49.452102, 11.076665),
  location(3, 'hel1', 'Helsinki DC Park 1', 'FI', 'Helsinki', 60.169855, 24.938379),
  location(4, 'ash', 'Ashburn, VA', 'US', 'Ashburn, VA', 39.045821, -77.487073, 'us-east'),
  location(5, 'hil', 'Hillsboro, OR', 'US', 'Hillsboro, OR', 45.54222, -122.95194, 'us-west'),
];

function location(
  id: number,
  name: string,
  description: string,
  country: string,
  city: string,
  latitude: number,
  longitude: number,
  networkZone = 'eu-central',
): LocationJson {
  return { id, name, description, country, city, latitude, longitude, network_zone: networkZone };
}

/** The deprecated `datacenter` object a server still carries (one datacenter per location). */
export function datacenterOf(loc: LocationJson, serverTypeIds: number[]) {
  const suffix = { fsn1: 'dc14', nbg1: 'dc3', hel1: 'dc2', ash: 'dc1', hil: 'dc1' }[loc.name];
  return {
    id: loc.id,
    name: `${loc.name}-${suffix ?? 'dc1'}`,
    description: `${loc.city} DC`,
    location: loc,
    server_types: {
      supported: serverTypeIds,
      available: serverTypeIds,
      available_for_migration: serverTypeIds,
    },
  };
}

/** What the stand-in sells: cores, memory (GB) and disk (GB) as Hetzner sells them. */
export interface ServerTypeEntry {
  readonly id: number;
  readonly name: string;
  readonly cores: number;
  readonly memory: number;
  readonly disk: number;
  readonly cpuType: 'shared' | 'dedicated';
  readonly category: string;
  readonly locations: readonly string[];
  readonly monthlyEur: number;
  /** Locations where it is still listed but deprecated (no longer sold to new servers). */
  readonly deprecatedIn?: readonly string[];
}

const EU = ['fsn1', 'nbg1', 'hel1'];
const ALL = ['fsn1', 'nbg1', 'hel1', 'ash', 'hil'];

function type(
  id: number,
  name: string,
  [cores, memory, disk]: [number, number, number],
  cpuType: 'shared' | 'dedicated',
  locations: string[],
  monthlyEur: number,
): ServerTypeEntry {
  const category =
    cpuType === 'dedicated'
      ? 'general_purpose'
      : name.startsWith('cx')
        ? 'cost_optimized'
        : 'regular_purpose';
  return { id, name, cores, memory, disk, cpuType, category, locations, monthlyEur };
}

// The CX line and the 2025 CPX generation are sold in the EU only; the older CPX line is listed
// everywhere but deprecated in the EU, where the new generation replaced it; CCX everywhere.
const OLD_CPX = (entry: ServerTypeEntry) => ({ ...entry, deprecatedIn: EU });
export const SERVER_TYPES: readonly ServerTypeEntry[] = [
  OLD_CPX(type(22, 'cpx11', [2, 2, 40], 'shared', ALL, 4.35)),
  OLD_CPX(type(23, 'cpx21', [3, 4, 80], 'shared', ALL, 7.55)),
  OLD_CPX(type(24, 'cpx31', [4, 8, 160], 'shared', ALL, 13.6)),
  OLD_CPX(type(25, 'cpx41', [8, 16, 240], 'shared', ALL, 25.2)),
  OLD_CPX(type(26, 'cpx51', [16, 32, 360], 'shared', ALL, 54.9)),
  type(104, 'cx22', [2, 4, 40], 'shared', EU, 3.79),
  type(105, 'cx32', [4, 8, 80], 'shared', EU, 6.8),
  type(106, 'cx42', [8, 16, 160], 'shared', EU, 16.4),
  type(107, 'cx52', [16, 32, 320], 'shared', EU, 32.4),
  type(96, 'ccx13', [2, 8, 80], 'dedicated', ALL, 12.49),
  type(97, 'ccx23', [4, 16, 160], 'dedicated', ALL, 24.49),
  type(98, 'ccx33', [8, 32, 240], 'dedicated', ALL, 48.49),
  type(114, 'cpx12', [1, 2, 40], 'shared', EU, 4.49),
  type(115, 'cpx22', [2, 4, 80], 'shared', EU, 7.99),
  type(116, 'cpx32', [4, 8, 160], 'shared', EU, 13.99),
  type(117, 'cpx42', [8, 16, 320], 'shared', EU, 25.49),
  type(118, 'cpx52', [12, 24, 480], 'shared', EU, 36.49),
  type(119, 'cpx62', [16, 32, 640], 'shared', EU, 49.99),
];

function price(net: number) {
  // Prices are `decimal` strings; gross adds German VAT.
  return { net: net.toFixed(4), gross: (net * 1.19).toFixed(4) };
}

/** A server type as Hetzner answers it, `available` false where a fault marks it sold out. */
export function serverTypeJson(
  entry: ServerTypeEntry,
  isUnavailable: (serverType: string, location: string) => boolean,
) {
  const sold = LOCATIONS.filter((loc) => entry.locations.includes(loc.name));
  return {
    id: entry.id,
    name: entry.name,
    description: entry.name.toUpperCase(),
    cores: entry.cores,
    memory: entry.memory,
    disk: entry.disk,
    deprecated: false,
    prices: sold.map((loc) => ({
      location: loc.name,
      price_hourly: price(entry.monthlyEur / 730),
      price_monthly: price(entry.monthlyEur),
      included_traffic: loc.network_zone === 'eu-central' ? 21990232555520 : 1099511627776,
      price_per_tb_traffic: price(1),
    })),
    storage_type: 'local',
    cpu_type: entry.cpuType,
    category: entry.category,
    architecture: 'x86',
    deprecation: null,
    locations: sold.map((loc) => ({
      id: loc.id,
      name: loc.name,
      deprecation: entry.deprecatedIn?.includes(loc.name)
        ? { announced: '2025-10-16T09:00:00Z', unavailable_after: '2026-01-01T00:00:00Z' }
        : null,
      recommended: loc.name === sold[0]?.name,
      available: !isUnavailable(entry.name, loc.name),
    })),
  };
}

/** The system images a project sees (x86 only). */
export const SYSTEM_IMAGES = [
  { id: 114690387, name: 'debian-12', flavor: 'debian', version: '12' },
  { id: 310557660, name: 'debian-13', flavor: 'debian', version: '13' },
  { id: 67794396, name: 'ubuntu-22.04', flavor: 'ubuntu', version: '22.04' },
  { id: 161547269, name: 'ubuntu-24.04', flavor: 'ubuntu', version: '24.04' },
  { id: 304364183, name: 'fedora-43', flavor: 'fedora', version: '43' },
  { id: 248917428, name: 'rocky-10', flavor: 'rocky', version: '10' },
  { id: 248918316, name: 'alma-10', flavor: 'alma', version: '10' },
] as const;
