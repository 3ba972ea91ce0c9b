# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tools/vm/lib.sh - what the tools/vm scripts share to boot their guests:
# finding the kernel, the cached initramfs with tools/vm/init, and the QEMU
# command line of a guest with the host root, the project tree and a
# per-guest directory over virtio-9p.  Sourced, not run.
#
# The sourcing script sets PROG and TREE and defines die(), which must not
# return.  vm_boot_files sets kernel, kver, boot_kernel and initramfs;
# vm_qemu sets the array qemu.  tmpfile names a file being written, for
# the caller's cleanup to remove.

VM_DIR=$TREE/tools/vm
readonly VM_DIR

tmpfile=
kvm=0		# 1: boot with KVM rather than TCG

is_uint()
{
	[[ $1 =~ ^[0-9]+$ ]]
}

is_positive()
{
	[[ $1 =~ ^[1-9][0-9]*$ ]]
}

# QEMU, and a busybox that works in an initramfs: sets busybox.
vm_check_host()
{
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
	busybox=$(command -v busybox) ||
		die "busybox not found (apt-get install busybox-static)"
	[[ $(file -bL -- "$busybox" 2>/dev/null) != *dynamically* ]] ||
		die "$busybox is dynamically linked (apt-get install busybox-static)"
}

# ---------------------------------------------------------------------------
# Kernel image helpers

# Succeed if $1 is an x86 bzImage: its setup header carries the "HdrS" magic.
is_bzimage()
{
	[[ $(dd if="$1" bs=1 skip=$((0x202)) count=4 status=none) == HdrS ]]
}

# Print the unsigned little-endian integer of $3 bytes at offset $2 in $1.
read_uint()
{
	od -An -tu"$3" -j "$2" -N "$3" -- "$1" | tr -d ' '
}

# Print the release string embedded in bzImage $1 ("6.1.0-56-amd64").  The
# setup header holds, at 0x20e, a pointer to it relative to 0x200.
bzimage_release()
{
	local ptr

	is_bzimage "$1" || return 1
	ptr=$(read_uint "$1" $((0x20e)) 2)
	dd if="$1" bs=1 skip=$((ptr + 0x200)) count=128 status=none |
		tr '\0' ' ' | awk '{ print $1; exit }'
}

# Under TCG, the decompressor of an xz-compressed bzImage runs for seconds.
# If the kernel has a PVH entry point, QEMU can load the uncompressed ELF
# vmlinux directly instead.  Extract it from bzImage $1 into $2; fail (and
# leave the bzImage to be booted) on anything unexpected.
extract_vmlinux()
{
	local img=$1 out=$2 sects off len magic
	local -a unpack

	is_bzimage "$img" || return 1
	command -v readelf >/dev/null || return 1

	# setup_sects, payload_offset and payload_length locate the payload.
	sects=$(read_uint "$img" $((0x1f1)) 1)
	off=$(read_uint "$img" $((0x248)) 4)
	len=$(read_uint "$img" $((0x24c)) 4)
	((sects)) || sects=4
	off=$(((sects + 1) * 512 + off))
	magic=$(od -An -tx1 -j "$off" -N6 -- "$img" | tr -d ' \n')
	case $magic in
	fd377a585a00)	unpack=(xz -dc --single-stream) ;;
	28b52ffd*)	unpack=(zstd -qdc) ;;
	1f8b*)		unpack=(gzip -dc) ;;
	*)		return 1 ;;
	esac
	command -v "${unpack[0]}" >/dev/null || return 1

	# The payload ends with its 4-byte uncompressed size, which some
	# decompressors complain about: judge by the result, not the status.
	tmpfile=$(mktemp "$out.XXXXXX")
	tail -c +$((off + 1)) -- "$img" | head -c "$len" |
		"${unpack[@]}" >"$tmpfile" 2>/dev/null || true

	# XEN_ELFNOTE_PHYS32_ENTRY (18) is the PVH entry point.
	if readelf -n -- "$tmpfile" 2>/dev/null | grep -q '(0x00000012)'; then
		mv -f -- "$tmpfile" "$out"
		tmpfile=
		return 0
	fi
	rm -f -- "$tmpfile"
	tmpfile=
	return 1
}

# ---------------------------------------------------------------------------
# Initramfs

# Print the modules needed to mount the 9p shares, in load order.  modprobe
# resolves the dependencies and reports built-in modules as "builtin", which
# are skipped.  A kernel without a modules directory (--kernel pointing at a
# custom build) is assumed to have virtio-pci and 9p built in.
boot_modules()
{
	local mod

	[[ -d /lib/modules/$kver ]] || return 0
	for mod in virtio_pci 9pnet_virtio 9p; do
		modprobe -S "$kver" --show-depends "$mod" 2>/dev/null ||
			echo "$PROG: warning: no module $mod for $kver," \
			     "assuming it is built in" >&2
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# A kernel without a modules directory has what the VM needs built in.  If
# it comes with the list of its built-in modules (modules.builtin next to the
# image, or in the build tree holding arch/x86/boot/bzImage), print that
# list's path: the guest then gets a /lib/modules/RELEASE made from it, so
# that "modprobe veth" succeeds for a built-in veth as it would on a
# distribution kernel.
builtin_modules()
{
	local dir

	[[ ! -d /lib/modules/$kver ]] || return 0
	dir=$(dirname -- "$kernel")
	for dir in "$dir" "$dir/../../.."; do
		if [[ -f $dir/modules.builtin ]]; then
			echo "$dir/modules.builtin"
			return 0
		fi
	done
}

# Build the initramfs into $1, in scratch directory $2: static busybox, the
# boot modules, /init.
build_initramfs()
{
	local out=$1 dir=$2/initramfs mod applet m

	mkdir -p "$dir"/{bin,dev,proc,sys,lib/modules}
	cp -- "$busybox" "$dir/bin/busybox"
	for applet in $("$busybox" --list); do
		[[ $applet == busybox ]] || ln -s busybox "$dir/bin/$applet"
	done

	# busybox insmod wants uncompressed modules.
	: >"$dir/modules.order"
	for mod in ${modules[@]+"${modules[@]}"}; do
		m=$dir/lib/modules/${mod##*/}
		case $mod in
		*.ko)		cp -- "$mod" "$m" ;;
		*.ko.xz)	m=${m%.xz}; xz -dc -- "$mod" >"$m" ;;
		*.ko.zst)	m=${m%.zst}; zstd -qdc -- "$mod" >"$m" ;;
		*.ko.gz)	m=${m%.gz}; gzip -dc -- "$mod" >"$m" ;;
		*)		die "unexpected module file: $mod" ;;
		esac
		echo "${m#"$dir"}" >>"$dir/modules.order"
	done

	if [[ -n $builtin ]]; then
		m=$dir/kmod/lib/modules/$kver
		mkdir -p "$m"
		cp -- "$builtin" "$m/"
		[[ ! -f $builtin.modinfo ]] || cp -- "$builtin.modinfo" "$m/"
		depmod -b "$dir/kmod" "$kver" ||
			die "depmod failed for the built-in modules of $kver"
	fi

	cp -- "$VM_DIR/init" "$dir/init"
	chmod 755 "$dir/init"

	# Write under a temporary name, then rename: concurrent runs may
	# build the same image, but none of them ever sees a partial one.
	tmpfile=$(mktemp "$out.XXXXXX")
	(cd "$dir" && find . -print0 | LC_ALL=C sort -z |
		cpio --quiet -o -0 -H newc -R 0:0) >"$tmpfile"
	chmod 644 "$tmpfile"
	mv -f -- "$tmpfile" "$out"
	tmpfile=
	rm -rf -- "$dir"
}

# ---------------------------------------------------------------------------
# Kernel and initramfs, both cached

# The image to boot and its initramfs, for kernel image $kernel (if empty,
# /boot/vmlinuz-$KVER, KVER being what make builds vnet.ko for:
# tools/testing/kver), building what is not cached in scratch directory
# $1.  Sets kernel, kver, boot_kernel, initramfs.
vm_boot_files()
{
	local scratch=$1 cache key vmlinux release

	if [[ -z $kernel ]]; then
		release=${KVER:-$("$VM_DIR/../testing/kver")} ||
			die "no kernel to boot; use --kernel"
		kernel=/boot/vmlinuz-$release
		[[ -f $kernel ]] ||
			die "no $kernel: KVER=$release has no image; use --kernel"
	fi
	[[ -f $kernel && -r $kernel ]] || die "cannot read kernel image $kernel"

	case ${kernel##*/} in
	vmlinuz-?*)	kver=${kernel##*/vmlinuz-} ;;
	*)		kver=$(bzimage_release "$kernel") || kver= ;;
	esac
	[[ -n $kver ]] || die "cannot tell the kernel release of $kernel"

	cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/vnet/vm
	mkdir -p -- "$cache" || die "cannot create $cache"

	boot_kernel=$kernel
	key=$(stat -L -c '%n %s %Y' -- "$kernel" | sha256sum | cut -c1-16)
	vmlinux=$cache/vmlinux-$kver-$key
	if [[ -s $vmlinux ]] || extract_vmlinux "$kernel" "$vmlinux"; then
		boot_kernel=$vmlinux
	fi

	# The key covers everything the image is made of: the code that
	# builds it, /init, the kernel release, the busybox and module files.
	mapfile -t modules < <(boot_modules)
	builtin=$(builtin_modules)
	key=$({
		cat -- "$VM_DIR/lib.sh" "$VM_DIR/init"
		echo "$kver"
		stat -L -c '%n %s %Y' -- "$busybox" ${modules[@]+"${modules[@]}"} \
			${builtin:+"$builtin"}
	} | sha256sum | cut -c1-16)
	initramfs=$cache/initramfs-$kver-$key.cpio
	if [[ ! -s $initramfs ]]; then
		build_initramfs "$initramfs" "$scratch"
	fi

	# Cached files are touched on every use; those unused for two weeks
	# (older kernels, older versions of these scripts, leftovers of
	# killed runs) go.
	touch -- "$initramfs"
	[[ $boot_kernel != "$vmlinux" ]] || touch -- "$vmlinux"
	find "$cache" -maxdepth 1 -type f -mtime +14 -delete 2>/dev/null || true
}

# Warns when the module the guest will load -- $VNET_KO if the caller
# says, else the tree's vnet.ko -- was built for another kernel than the
# one about to boot ($kver): its insmod would fail "Invalid module format".
vm_check_module()
{
	local ko=${VNET_KO:-$TREE/vnet.ko} built

	[[ -f $ko ]] || return 0
	built=$(modinfo -F vermagic "$ko" 2>/dev/null) || return 0
	built=${built%% *}
	[[ $built == "$kver" ]] ||
		echo "$PROG: warning: ${ko##*/} is built for $built, the VM" \
		     "boots $kver (make KVER=$kver)" >&2
}

# ---------------------------------------------------------------------------
# QEMU

# The command line of a guest with $1 MB of memory and $2 CPUs whose
# per-guest share ("vnetrun") is directory $3, booted with the kernel
# arguments in the array cmdline and KVM if kvm is 1.  Sets qemu.  The
# serial console is QEMU's stdout.
vm_qemu()
{
	# QEMU's option parser wants commas in values doubled.
	qemu=(
		qemu-system-x86_64
		-nographic -no-reboot -nodefaults -no-user-config
		-serial stdio
		-m "$1" -smp "$2"
		-kernel "$boot_kernel" -initrd "$initramfs"
		-append "${cmdline[*]}"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=${TREE//,/,,},mount_tag=vnettree,security_model=none,multidevs=remap"
		-virtfs "local,path=${3//,/,,},mount_tag=vnetrun,security_model=none"
	)
	# Without CMPXCHG16B under TCG: QEMU 7.2's helper for it leaves the
	# flags' evaluation state stale, and a SLUB fast path retried after
	# an interrupt could take the VM bit into EFLAGS, the next interrupt
	# then ending in a double fault (8.0 inlined the instruction).  Two
	# cluster guests died so, in kmalloc, EFLAGS reading 0x202 | RDI.
	# SLUB runs its slow path instead, with interrupts off.
	if ((kvm)); then
		qemu+=(-accel kvm -cpu host)
	else
		qemu+=(-accel tcg -cpu max,-cx16)
	fi
}

# The kernel command line both tools start from.  loglevel=5 keeps the
# console quiet but still prints KERN_WARNING messages: WARN() splats are
# printed at that level (oops and BUG reports are more severe).  panic=-1
# reboots at once on a panic, and -no-reboot turns that into QEMU exiting.
# no_timer_check: a guest the loaded host starves at boot fails the check
# that the PIT reaches the IO-APIC and panics ("IO-APIC + timer doesn't
# work"); the timer works, the check only times it, as cloud images know.
vm_cmdline()
{
	cmdline=(console=ttyS0 loglevel=5 panic=-1 edd=off rdinit=/init
		 no_timer_check)
}
