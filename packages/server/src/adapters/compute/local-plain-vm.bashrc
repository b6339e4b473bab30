# The rc file of a local Plain VM's interactive bash (`bash --rcfile <this> -i`). Debian's bash has
# read /etc/bash.bashrc before it, whose prompt names the host and the service's Unix user: the
# session's prompt (`<default user>@<VM name>:~$ `) comes back here, then the VM's own ~/.bashrc
# runs, as on a VM.
PS1=$LOCAL_VM_PS1
unset LOCAL_VM_PS1
if [ -f ~/.bashrc ]; then
  . ~/.bashrc
fi
