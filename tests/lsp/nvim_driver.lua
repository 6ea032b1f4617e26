-- Drives a real headless Neovim (>= 0.11) with the shipped packaging/nvim/lsp/svgloo.lua
-- against the real `svgloo lsp`, and writes what a user would have seen to a JSON file.
--
-- Run as: nvim --headless --clean -c 'luafile tests/lsp/nvim_driver.lua'
-- Environment: SVGLOO_NVIM_PLAN (JSON: {packaging, settings, out, steps}), see test_nvim.py.
-- Times are wall-clock milliseconds measured inside Neovim (vim.uv.hrtime).

local plan = vim.json.decode(io.open(os.getenv('SVGLOO_NVIM_PLAN')):read('a'))
local out = { steps = {}, notifications = {}, publishes = {} }
local WAIT_MS = plan.wait_ms or 120000

local function now_ms()
  return vim.uv.hrtime() / 1e6
end

-- Everything the user would see as a message: vim.notify (LSP client errors such as
-- "Error in server: ..." go through it) and window/showMessage.
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(out.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  return notify(msg, level, opts)
end

-- Every publishDiagnostics with its version and arrival time.
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx)
  table.insert(out.publishes, {
    uri = result.uri, version = result.version, t = now_ms(), n = #result.diagnostics,
    codes = vim.tbl_map(function(d) return d.code or vim.NIL end, result.diagnostics),
  })
  return publish(err, result, ctx)
end

-- The shipped configuration, found on the runtimepath as lsp/svgloo.lua; only the
-- analysis settings are overridden, as a user would in init.lua.
vim.opt.runtimepath:prepend(plan.packaging)
vim.lsp.config('svgloo', { settings = { svgloo = plan.settings } })
vim.lsp.enable('svgloo')

local function diagnostics(buf)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(items, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, code = d.code, message = d.message, source = d.source,
    })
  end
  return items
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

-- Wait for a publication for the buffer's current version (Neovim's LSP version is the
-- buffer's changedtick) that satisfies `accept`, after time `since`.
local function wait_publish(buf, since, accept)
  local uri = vim.uri_from_bufnr(buf)
  local found
  vim.wait(WAIT_MS, function()
    local version = vim.lsp.util.buf_versions[buf]
    for _, p in ipairs(out.publishes) do
      if p.uri == uri and p.t >= since and p.version == version and (not accept or accept(p)) then
        found = p
        return true
      end
    end
    return false
  end, 20)
  return found
end

local function has_code(code)
  return function(p)
    return vim.tbl_contains(p.codes, code)
  end
end

local function lacks_code(code)
  return function(p)
    return not vim.tbl_contains(p.codes, code)
  end
end

local steps = {}

-- Open a file: time to its first diagnostics, and what they are.
function steps.open(step, rec)
  local t0 = now_ms()
  vim.cmd.edit(vim.fn.fnameescape(step.path))
  local buf = vim.api.nvim_get_current_buf()
  rec.filetype = vim.bo[buf].filetype
  local p = wait_publish(buf, t0, step.wait_code and has_code(step.wait_code))
  rec.ms = p and (p.t - t0) or vim.NIL
  rec.clients = #vim.lsp.get_clients({ bufnr = buf, name = 'svgloo' })
  rec.diagnostics = diagnostics(buf)
end

-- The code-action menu at a position: its titles (in the order the menu lists them) and
-- the result of choosing an entry; then the time until a publication lacks `cleared`.
function steps.action(step, rec)
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_cursor(0, { step.line + 1, step.col })
  local shown
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    shown = {}
    for i, item in ipairs(items) do
      shown[i] = item.action and item.action.title or tostring(item)
    end
    local pick
    for i, title in ipairs(shown) do
      if not pick and (not step.choose or title:find(step.choose, 1, true)) then
        pick = i
      end
    end
    if pick and step.apply then
      on_choice(items[pick], pick)
    else
      on_choice(nil, nil)
    end
  end
  local tick = vim.b[buf].changedtick
  local t0 = now_ms()
  vim.lsp.buf.code_action()
  vim.wait(step.menu_ms or 30000, function()
    return shown ~= nil
  end, 10)
  vim.ui.select = select
  rec.titles = shown or vim.NIL
  if step.apply and shown then
    vim.wait(WAIT_MS, function()
      return vim.b[buf].changedtick ~= tick
    end, 10)
    rec.text = buffer_text(buf)
    local p = wait_publish(buf, t0, step.cleared and lacks_code(step.cleared))
    rec.ms = p and (p.t - t0) or vim.NIL
    rec.diagnostics = diagnostics(buf)
  end
end

-- Replace bytes [col, end_col) of a line; the time until the new version's diagnostics
-- (with `wait_code` among them, when given).
function steps.edit(step, rec)
  local buf = vim.api.nvim_get_current_buf()
  local t0 = now_ms()
  vim.api.nvim_buf_set_text(buf, step.line, step.col, step.line, step.end_col, { step.text })
  local p = wait_publish(buf, t0, step.wait_code and has_code(step.wait_code))
  rec.ms = p and (p.t - t0) or vim.NIL
  rec.diagnostics = diagnostics(buf)
end

-- Wait for a diagnostic code on the current buffer's version (e.g. low-purity, which
-- arrives after the score's diagnostics).
function steps.wait(step, rec)
  local buf = vim.api.nvim_get_current_buf()
  local t0 = now_ms()
  local p = wait_publish(buf, 0, has_code(step.code))
  rec.ms = p and (p.t - t0) or vim.NIL
  rec.diagnostics = diagnostics(buf)
end

local ok, err = pcall(function()
  for _, step in ipairs(plan.steps) do
    local rec = { kind = step.kind, name = step.name }
    table.insert(out.steps, rec)
    steps[step.kind](step, rec)
  end
end)
if not ok then
  out.error = tostring(err)
end
-- Let late messages (a server error right after the last result) arrive.
vim.wait(plan.settle_ms or 500, function() return false end)
out.messages = vim.api.nvim_exec2('messages', { output = true }).output
out.version = tostring(vim.version())
local f = io.open(plan.out, 'w')
f:write(vim.json.encode(out))
f:close()
vim.cmd('qa!')
