-- frame_functions: the function of each frame, as perf report names it:
-- one row per distinct address (`frames` at inline depth 0).
--
--   capture   the capture
--   frame_id  → frames.frame_id
--   symbol    the ELF/kallsyms symbol. An unresolved frame is named by its
--             offset in its DSO, else its address (0x..., lower-case hex
--             without leading zeros), as perf does
--   dso       the DSO's short name, or [unknown]
--
-- No hex function has one name in DataFusion (to_hex), Spark (hex) and
-- DuckDB, so the digits are picked out of `d` one by one, with arithmetic
-- every engine does exactly. The address (a u64: UInt64 in DataFusion,
-- decimal(20,0) in Spark) is split into 32-bit halves that fit a BIGINT.
-- `/` divides integers as such in DataFusion and as DOUBLE in DuckDB and
-- Spark, exact either way here: `hi` divides a multiple of 2^32 below
-- 2^64 (32 significant bits) by 2^32, and a half over a power of 16 is
-- floored to the same integer. Leading zeros go, except the last digit's
-- (0x0): without a NULLIF or COALESCE around the digits, which DataFusion
-- rewrites as a CASE that copies them (45 ms to plan each use, not 15).
SELECT
  capture,
  frame_id,
  COALESCE(symbol, concat('0x', trim(LEADING '0' FROM concat(
    substr(d, CAST(floor(hi / 268435456) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 16777216) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 1048576) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 65536) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 4096) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 256) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 16) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(hi / 1) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 268435456) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 16777216) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 1048576) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 65536) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 4096) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 256) % 16 AS INT) + 1, 1),
    substr(d, CAST(floor(lo / 16) % 16 AS INT) + 1, 1))),
    substr(d, CAST(floor(lo / 1) % 16 AS INT) + 1, 1))) AS symbol,
  COALESCE(dso, '[unknown]') AS dso
FROM (
  SELECT capture, frame_id, symbol, dso, '0123456789abcdef' AS d,
    CAST(a % 4294967296 AS BIGINT) AS lo,
    CAST((a - a % 4294967296) / 4294967296 AS BIGINT) AS hi
  FROM (
    SELECT capture, frame_id, symbol, dso, COALESCE(dso_offset, address) AS a
    FROM frames
    WHERE inline_depth = 0
  ) f
) h
