-- _named_function_ids: the function ids a functions table of the caller's
-- names (a symbol and a DSO): set_functions joins only those.
--
--   function_id  → functions
SELECT CAST(function_id AS BIGINT) AS function_id FROM functions
WHERE symbol IS NOT NULL AND dso IS NOT NULL
