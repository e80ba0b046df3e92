# Which formula sets a CPU uses, found as perf finds its tables.
#
# x86 rows: perf's pmu-events/arch/x86/mapfile.csv (Linux 6.12.117, plus
# newer rows seen upstream), in its order; the key is HEADER_CPUID turned
# into `Vendor-Family-MODEL[-STEPPING]` (decimal family, upper-case hex
# model and stepping); a row with three dashes matches the stepping too,
# other rows the key without it; the first row whose regular expression
# matches the whole key wins.
# arm rows: arm64/mapfile.csv MIDRs; implementer and part must be equal,
# and (variant, revision) at least the row's.
#
# A model's sets on the same PMU are alternatives, the first preferred:
# a capture is answered by each whose level 1 its events give, and
# `perfq record` records the first it can (the `-gp` sets count on
# general-purpose counters, for a perf that cannot open PERF_METRICS).
#
# kind | pattern | model | sets (set[@pmu] [const=value ...], ...; `-` none) | note
x86 | GenuineIntel-6-(97|9A|B7|BA|BF) | alderlake | intel-glc@cpu_core, intel-grt@cpu_atom, intel-glc-gp@cpu_core | Alder Lake, Raptor Lake
x86 | GenuineIntel-6-BE | alderlaken | intel-grt | Alder Lake-N
x86 | GenuineIntel-6-C[56] | arrowlake | intel-lnc@cpu_core, intel-skt@cpu_atom, intel-lnc-gp@cpu_core | Arrow Lake
x86 | GenuineIntel-6-(3D|47) | broadwell | intel-hsw | Broadwell
x86 | GenuineIntel-6-56 | broadwellde | intel-hsw | Broadwell-DE
x86 | GenuineIntel-6-4F | broadwellx | intel-hsw | Broadwell-EP
x86 | GenuineIntel-6-55-[56789ABCDEF] | cascadelakex | intel-skl | Cascade Lake
x86 | GenuineIntel-6-9[6C] | elkhartlake | intel-tremont | Elkhart Lake
x86 | GenuineIntel-6-CF | emeraldrapids | intel-glc, intel-glc-gp | Emerald Rapids
x86 | GenuineIntel-6-5[CF] | goldmont | - | perf has no top-down metrics for Goldmont
x86 | GenuineIntel-6-7A | goldmontplus | - | perf has no top-down metrics for Goldmont Plus
x86 | GenuineIntel-6-B6 | grandridge | intel-cmt | Grand Ridge
x86 | GenuineIntel-6-A[DE] | graniterapids | intel-glc, intel-glc-gp | Granite Rapids
x86 | GenuineIntel-6-(3C|45|46) | haswell | intel-hsw | Haswell
x86 | GenuineIntel-6-3F | haswellx | intel-hsw | Haswell-EP
x86 | GenuineIntel-6-7[DE] | icelake | intel-icl, intel-icl-gp | Ice Lake
x86 | GenuineIntel-6-6[AC] | icelakex | intel-icl, intel-icl-gp | Ice Lake-SP
x86 | GenuineIntel-6-3A | ivybridge | intel-hsw | Ivy Bridge
x86 | GenuineIntel-6-3E | ivytown | intel-hsw | Ivy Bridge-EP
x86 | GenuineIntel-6-2D | jaketown | intel-hsw | Sandy Bridge-EP
x86 | GenuineIntel-6-(57|85) | knightslanding | - | perf has no top-down metrics for Knights Landing
x86 | GenuineIntel-6-BD | lunarlake | intel-lnc@cpu_core, intel-skt@cpu_atom, intel-lnc-gp@cpu_core | Lunar Lake
x86 | GenuineIntel-6-(AA|AC|B5) | meteorlake | intel-glc@cpu_core, intel-cmt@cpu_atom, intel-glc-gp@cpu_core | Meteor Lake
x86 | GenuineIntel-6-CC | pantherlake | intel-lnc@cpu_core | Panther Lake (its E-cores have no formula set here)
x86 | GenuineIntel-6-A7 | rocketlake | intel-icl, intel-icl-gp | Rocket Lake
x86 | GenuineIntel-6-2A | sandybridge | intel-hsw | Sandy Bridge
x86 | GenuineIntel-6-8F | sapphirerapids | intel-glc, intel-glc-gp | Sapphire Rapids
x86 | GenuineIntel-6-AF | sierraforest | intel-cmt | Sierra Forest
x86 | GenuineIntel-6-(37|4A|4C|4D|5A) | silvermont | - | perf has no top-down metrics for Silvermont
x86 | GenuineIntel-6-(4E|5E|8E|9E|A5|A6) | skylake | intel-skl | Skylake, Kaby Lake, Coffee Lake, Comet Lake
x86 | GenuineIntel-6-55-[01234] | skylakex | intel-skl | Skylake-SP
x86 | GenuineIntel-6-86 | snowridgex | intel-tremont | Snow Ridge
x86 | GenuineIntel-6-8[CD] | tigerlake | intel-icl, intel-icl-gp | Tiger Lake
x86 | GenuineIntel-6-(1A|1E|1F|2E) | nehalem | - | perf has no top-down metrics for Nehalem
x86 | GenuineIntel-6-(25|2C|2F) | westmere | - | perf has no top-down metrics for Westmere
x86 | GenuineIntel-6-(1C|26|27|35|36) | bonnell | - | perf has no top-down metrics for Bonnell
x86 | AuthenticAMD-23-([12][0-9A-F]|[0-9A-F]) | amdzen1 | - | Zen 1 has no pipeline-utilization events
x86 | AuthenticAMD-23-[[:xdigit:]]+ | amdzen2 | - | Zen 2 has no pipeline-utilization events
x86 | AuthenticAMD-25-([245][[:xdigit:]]|[[:xdigit:]]) | amdzen3 | - | Zen 3 has no pipeline-utilization events
x86 | AuthenticAMD-25-[[:xdigit:]]+ | amdzen4 | amd-zen4 | Zen 4
x86 | AuthenticAMD-26-[[:xdigit:]]+ | amdzen5 | amd-zen5 | Zen 5
arm | 0x00000000410fd0c0 | neoverse-n1 | - | Neoverse N1 has no slot events (perf: stalled-cycle ratios only)
arm | 0x00000000410fd400 | neoverse-v1 | arm-neoverse-v1 | Neoverse V1
arm | 0x00000000410fd493 | neoverse-n2 | arm-neoverse-n2v2 width=5 | Neoverse N2 r0p3 and later
arm | 0x00000000410fd490 | neoverse-n2 | arm-neoverse-n2v2 width=5 cycles_bias=1 | Neoverse N2 r0p0-r0p2
arm | 0x00000000410fd4f0 | neoverse-v2 | arm-neoverse-n2v2 width=8 | Neoverse V2
arm | any | arm-generic | arm-sbsa | any other Arm core: perf's generic set, with the recorded slots capability
