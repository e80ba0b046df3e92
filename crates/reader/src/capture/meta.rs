//! What the feature sections say about the recording machine and
//! session ([`Meta`]), read when a capture is opened.

use super::Capture;
use crate::features::{self, id as feat};

/// Facts about the recording machine and session, from the feature sections.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// Host name.
    pub hostname: Option<String>,
    /// Kernel release (`uname -r`).
    pub os_release: Option<String>,
    /// perf version that recorded.
    pub perf_version: Option<String>,
    /// Architecture (`uname -m`).
    pub arch: Option<String>,
    /// CPU description (`model name`).
    pub cpu_desc: Option<String>,
    /// CPU id string (`GenuineIntel-6-55-4`, `0x00000000410fd0c0`, ...).
    pub cpuid: Option<String>,
    /// CPUs (available, online).
    pub nr_cpus: Option<(u32, u32)>,
    /// Memory in kB.
    pub total_mem_kb: Option<u64>,
    /// The `perf record` command line.
    pub cmdline: Option<Vec<String>>,
    /// First and last sample time, as perf recorded them.
    pub sample_time: Option<(u64, u64)>,
    /// How data records were compressed.
    pub compression: Option<features::CompressionInfo>,
    /// Build ids perf recorded for the DSOs that had samples.
    pub build_ids: Vec<features::BuildIdEntry>,
    /// Event groups.
    pub groups: Vec<features::GroupDesc>,
    /// simpleperf's key/value meta info.
    pub simpleperf_meta: Vec<(String, String)>,
    /// PMU names and the `type` their events carry (`PMU_MAPPINGS`).
    pub pmu_mappings: Vec<features::PmuMapping>,
    /// PMU capabilities: `CPU_PMU_CAPS` first, as PMU `cpu`, then each
    /// PMU of `PMU_CAPS`.
    pub pmu_caps: Vec<features::PmuCaps>,
    /// (core PMU, CPU list) of a hybrid machine (`HYBRID_TOPOLOGY`).
    pub hybrid_topology: Vec<(String, String)>,
    /// Feature numbers present.
    pub features: Vec<u32>,
}

impl Capture {
    /// Reads [`Meta`] from the feature sections.
    pub(super) fn read_meta(&mut self) {
        let e = self.endian();
        let mut m = Meta {
            features: self.features.iter().map(|(f, _)| *f).collect(),
            ..Meta::default()
        };
        let string = |c: &Capture, f| c.feature_data(f).and_then(|b| features::parse_string(b, e));
        m.hostname = string(self, feat::HOSTNAME);
        m.os_release = string(self, feat::OSRELEASE);
        m.perf_version = string(self, feat::VERSION);
        m.arch = string(self, feat::ARCH);
        m.cpu_desc = string(self, feat::CPUDESC);
        m.cpuid = string(self, feat::CPUID);
        m.nr_cpus = self
            .feature_data(feat::NRCPUS)
            .and_then(|b| features::parse_nrcpus(b, e));
        m.total_mem_kb = self
            .feature_data(feat::TOTAL_MEM)
            .and_then(|b| e.u64_at(b, 0));
        m.cmdline = self
            .feature_data(feat::CMDLINE)
            .and_then(|b| features::parse_cmdline(b, e));
        m.sample_time = self
            .feature_data(feat::SAMPLE_TIME)
            .and_then(|b| features::parse_sample_time(b, e));
        m.compression = self
            .feature_data(feat::COMPRESSED)
            .and_then(|b| features::parse_compressed(b, e));
        if let Some(b) = self.feature_data(feat::BUILD_ID) {
            match features::parse_build_ids(b, e) {
                Some(v) => m.build_ids = v,
                None => self.warnings.push(self.feature_warning(
                    feat::BUILD_ID,
                    "BUILD_ID feature is malformed; build ids ignored",
                )),
            }
        }
        if let Some(b) = self.feature_data(feat::GROUP_DESC) {
            match features::parse_group_desc(b, e) {
                Some(v) => m.groups = v,
                None => self.warnings.push(self.feature_warning(
                    feat::GROUP_DESC,
                    "GROUP_DESC feature is malformed; groups ignored",
                )),
            }
        }
        if let Some(b) = self.feature_data(feat::SIMPLEPERF_META_INFO) {
            m.simpleperf_meta = features::parse_simpleperf_meta_info(b);
        }
        self.read_pmu_meta(&mut m);
        self.meta = m;
    }

    /// The PMU features: mappings, capabilities, hybrid topology.
    fn read_pmu_meta(&mut self, m: &mut Meta) {
        let e = self.endian();
        if let Some(v) = self.decode_feature(feat::PMU_MAPPINGS, "PMU mappings", |b| {
            features::parse_pmu_mappings(b, e)
        }) {
            m.pmu_mappings = v;
        }
        if let Some(c) = self.decode_feature(feat::CPU_PMU_CAPS, "cpu PMU capabilities", |b| {
            features::parse_cpu_pmu_caps(b, e)
        }) {
            m.pmu_caps.push(c);
        }
        if let Some(v) = self.decode_feature(feat::PMU_CAPS, "PMU capabilities", |b| {
            features::parse_pmu_caps(b, e)
        }) {
            m.pmu_caps.extend(v);
        }
        if let Some(v) = self.decode_feature(feat::HYBRID_TOPOLOGY, "hybrid topology", |b| {
            features::parse_hybrid_topology(b, e)
        }) {
            m.hybrid_topology = v;
        }
    }

    /// Decodes feature `f` with `parse` if present; a section `parse`
    /// rejects is a warning (naming `what` is ignored), not an error.
    fn decode_feature<T>(
        &mut self,
        f: u32,
        what: &str,
        parse: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Option<T> {
        let b = self.feature_data(f)?;
        let v = parse(b);
        if v.is_none() {
            let message = format!(
                "{} feature is malformed; {what} ignored",
                features::feature_name(f).to_uppercase()
            );
            self.warnings.push(self.feature_warning(f, &message));
        }
        v
    }
}
