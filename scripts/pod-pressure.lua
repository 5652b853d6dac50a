-- pod-pressure: pods and cgroups against their memory and CPU limits, the 80 % threshold and their top offenders
--
-- Usage: procwalk run pod-pressure [-- threshold=80 top=3]
--   threshold=PERCENT  usage of a limit that counts as pressure (default 80)
--   top=N              offenders listed per cgroup (default 3, 0: none)
-- Memory is the cgroup's own usage (memory.current or memory.usage_in_bytes,
-- page cache included) against the tightest memory limit of it and its
-- parents; CPU is the members' CPU rate against the tightest quota, so it
-- needs two scans (--interval). Under watch, a cgroup alerts when it crosses
-- the threshold and again only after it went below it.

local pw = require "procwalk"

local threshold = tonumber(pw.args.threshold or "80")
if not threshold or threshold <= 0 or threshold > 100 then
  error("threshold must be a percentage in (0, 100], got " .. tostring(pw.args.threshold))
end
local top = tonumber(pw.args.top or "3")
if not top or top < 0 or top % 1 ~= 0 then error("top must be a whole number >= 0, got " .. tostring(pw.args.top)) end

local cgroups, err = pw.sessions("cgroup")
if not cgroups then error("cannot group sessions: " .. err) end

local limited = {}
for _, s in ipairs(cgroups) do
  if s.memory_limit_bytes or s.cpu_quota_cores then
    local mem, cpu = s.memory_usage_percent, s.cpu_quota_percent
    limited[#limited + 1] = { s = s, mem = mem, cpu = cpu, worst = math.max(mem or 0, cpu or 0) }
  end
end
table.sort(limited, function(a, b)
  if a.worst ~= b.worst then return a.worst > b.worst end
  return a.s.name < b.s.name
end)

if #limited == 0 then
  print("no cgroup with a memory limit or CPU quota")
  return
end

pw.state.pressed = pw.state.pressed or {}
local pressed = pw.state.pressed
-- The report fits 80 columns: a name longer than its column goes on a
-- line of its own, the top offenders on the next line, wrapped.
local row = "%-2s %s %-26s %s" -- the name padded by its cells (pw.pad)
print(string.format(row, "", pw.pad("CGROUP", 20), "MEMORY", "CPU"))
for _, e in ipairs(limited) do
  local s = e.s
  local memory = s.memory_limit_bytes and string.format("%s/%s %3.0f%%", pw.bytes(s.memory_usage_bytes or 0),
    pw.bytes(s.memory_limit_bytes), e.mem or 0) or "no limit"
  local cpu = s.cpu_quota_cores and (e.cpu and string.format("%.2f/%.2g cores %3.0f%%", s.cpu / 100, s.cpu_quota_cores, e.cpu)
    or string.format("?/%.2g cores", s.cpu_quota_cores)) or "no quota"
  local offenders = {}
  for _, p in ipairs(top > 0 and s:top(s.pss and "pss" or "rss", top) or {}) do
    offenders[#offenders + 1] = string.format("%s %d %s", pw.printable(p.comm), p.pid, pw.bytes(p.pss or p.rss))
  end
  local hot = e.worst >= threshold
  local name = pw.printable(s.attrs.pod and (s.attrs.namespace and s.attrs.namespace .. "/" or "") .. s.attrs.pod or s.name)
  local mark, shown = hot and "!!" or "", name
  if pw.width(name) > 20 then
    print(pw.wrap(string.format("%-2s %s", mark, name), 80, "   "))
    mark, shown = "", ""
  end
  print(pw.wrap(string.format(row, mark, pw.pad(shown, 20), memory, cpu), 80, "   "))
  if #offenders > 0 then print(pw.wrap("   top offenders: " .. table.concat(offenders, ", "), 80, "     ")) end
  if hot and not pressed[s.ref] then
    local what = (e.mem or 0) >= (e.cpu or 0) and "memory" or "CPU"
    pw.alert { level = e.worst >= 95 and "critical" or "warning",
      message = string.format("pod-pressure: %s at %.0f%% of its %s limit", name, e.worst, what),
      session = s, value = e.worst, threshold = threshold }
  end
  pressed[s.ref] = hot or nil
end
