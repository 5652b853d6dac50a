-- zombies: zombie processes and the parents that do not reap them, per session
--
-- Usage: procwalk run zombies [-- alert=N]
--   alert=N  raise an alert when one parent holds N or more zombies
--            (default 5)
-- A zombie has exited and holds no memory, only a pid; it stays until its
-- parent reaps it. Killing a zombie does nothing: fix or restart the
-- parent, or end the parent so that init adopts and reaps them.

local pw = require "procwalk"

local threshold = tonumber(pw.args.alert or "5")
if not threshold or threshold < 1 then error("alert must be a number >= 1, got " .. tostring(pw.args.alert)) end

-- where names the session a process runs in, by the most telling kind.
local function where(p)
  for _, kind in ipairs { "agent", "tmux", "cgroup", "user" } do
    local s = p:session(kind)
    if s then return s end
  end
end

local parents, order = {}, {}
local zombies = pw.processes { state = "Z" }
for _, z in ipairs(zombies) do
  local parent = z:parent()
  local key = parent and parent.id or "none"
  if not parents[key] then
    parents[key] = { parent = parent, zombies = {} }
    order[#order + 1] = key
  end
  table.insert(parents[key].zombies, z)
end

if #zombies == 0 then
  print("no zombies")
  return
end
print(string.format("%d %s under %d %s", #zombies, #zombies == 1 and "zombie" or "zombies",
  #order, #order == 1 and "parent" or "parents"))
for _, key in ipairs(order) do
  local entry = parents[key]
  local parent, list = entry.parent, entry.zombies
  local names = {}
  if #list <= 5 then
    for _, z in ipairs(list) do
      names[#names + 1] = string.format("%s %d (%s)", pw.printable(z.comm), z.pid, pw.duration(z.age))
    end
  else -- a parent can hold thousands: count them by name
    local counts, oldest = {}, 0
    for _, z in ipairs(list) do
      if not counts[z.comm] then names[#names + 1] = z.comm end
      counts[z.comm] = (counts[z.comm] or 0) + 1
      oldest = math.max(oldest, z.age)
    end
    table.sort(names, function(a, b)
      if counts[a] ~= counts[b] then return counts[a] > counts[b] end
      return a < b
    end)
    local shown = {}
    for i = 1, math.min(#names, 5) do shown[i] = pw.printable(names[i]) .. " x" .. counts[names[i]] end
    if #names > 5 then shown[#shown + 1] = (#names - 5) .. " other names" end
    names = { table.concat(shown, ", ") .. " (oldest " .. pw.duration(oldest) .. ")" }
  end
  local s = parent and where(parent)
  local who = parent and string.format("%s %d", pw.printable(parent.comm), parent.pid) or "no parent in view"
  print(pw.wrap(string.format("  %s%s: %d not reaped: %s", who, s and " in " .. pw.printable(s.ref) or "", #list,
    table.concat(names, ", ")), 80, "    ")) -- fits 80 columns
  if parent and #list >= threshold then
    pw.alert { message = string.format("zombies: %s %d has not reaped %d children", parent.comm, parent.pid, #list),
      session = s, process = parent, value = #list, threshold = threshold }
  end
end
