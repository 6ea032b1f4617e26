-- Check a Neovim svgloo setup without opening a file; exits 1 (with the reason on stderr)
-- when the setup would not work, 0 when it would.
--
--   nvim --headless -u NONE -c 'luafile packaging/nvim/check.lua'
--
-- It checks the setup for this Neovim: 0.11 or later uses lsp/svgloo.lua with
-- vim.lsp.enable; older versions (0.7-0.10) have no vim.lsp.enable and need the
-- autocmd setup of packaging/nvim/README.md ("Neovim 0.7 to 0.10"), which this check
-- accepts when SVGLOO_NVIM_SETUP=legacy is set.
local function fail(msg)
  io.stderr:write('svgloo check failed: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

local ok, err = pcall(function()
  local v = vim.version and vim.version() or { major = 0, minor = 0, patch = 0 }
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  local legacy = os.getenv('SVGLOO_NVIM_SETUP') == 'legacy'
  local cmd
  if legacy then
    if type(vim.lsp.start_client) ~= 'function' then
      return fail('Neovim ' .. version .. ' has no vim.lsp.start_client (needs 0.7 or later)')
    end
    cmd = { 'svgloo', 'lsp' }
  else
    if type(vim.lsp.enable) ~= 'function' or type(vim.lsp.config) == 'nil' then
      return fail('Neovim ' .. version .. ' has no vim.lsp.enable / vim.lsp.config '
        .. '(they arrived in 0.11): use the "Neovim 0.7 to 0.10" setup of '
        .. 'packaging/nvim/README.md and run this check with SVGLOO_NVIM_SETUP=legacy')
    end
    local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
    local cfg = dofile(here .. 'lsp/svgloo.lua')
    if type(cfg) ~= 'table' or type(cfg.cmd) ~= 'table' then
      return fail('lsp/svgloo.lua did not return a configuration with a cmd')
    end
    if not vim.tbl_contains(cfg.filetypes or {}, 'svg') then
      return fail('lsp/svgloo.lua does not list the svg filetype')
    end
    cmd = cfg.cmd
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    return fail('`' .. cmd[1] .. '` is not an executable on PATH: install svgloo '
      .. '(pip install . in a checkout) or set cmd to { python, "-m", "svgloo", "lsp" }')
  end
  local out = vim.fn.system({ cmd[1], 'lsp', '--help' })
  if vim.v.shell_error ~= 0 then
    return fail('`' .. cmd[1] .. ' lsp --help` failed: ' .. out)
  end
  io.stdout:write('svgloo check: Neovim ' .. version .. ', ' .. (legacy and 'legacy' or '0.11')
    .. ' setup, server `' .. table.concat(cmd, ' ') .. '` found\n')
end)
if not ok then
  fail(tostring(err))
end
vim.cmd('qall!')
