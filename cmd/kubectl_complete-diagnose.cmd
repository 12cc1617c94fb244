@echo off
rem kubectl (1.26 and later) runs this, found on PATH, to complete "kubectl diagnose ...": it
rem passes the words typed after "kubectl diagnose" and relays the answer, which the plugin gives
rem with cobra's __complete. The plugin beside this script is preferred, else the one on PATH.
if exist "%~dp0kubectl-diagnose.exe" (
  "%~dp0kubectl-diagnose.exe" __complete %*
) else (
  kubectl-diagnose.exe __complete %*
)
