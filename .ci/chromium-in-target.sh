#!/usr/bin/env bash
# A headless Chromium that lives entirely under target/browser/, so CI can use a real
# browser on a fresh machine image without a root-level install (CI installs only
# under target/ or a venv; Google's download servers are out of reach, the Debian
# mirror is not). Debian's own chromium package and the shared libraries it needs
# that this machine lacks are fetched with apt-get into target/ and unpacked with
# `dpkg -x`; a launcher runs the binary with LD_LIBRARY_PATH pointing at them.
#
# Usage: bash .ci/chromium-in-target.sh   (from anywhere)
# Prints the launcher's path (target/browser/chromium) on stdout, everything else on
# stderr. Installs only when the launcher is missing, so a machine that keeps
# target/ skips the download; `rm -rf target/browser` starts over.
#
# Why apt resolves the set: `apt-get install --download-only` against this machine's
# own dpkg status picks exactly the packages (chromium, its libraries, a font) not
# already installed here, and checks each file's hash against the signed index. Its
# package lists, cache and downloads go to target/browser/apt, never /var.
# The version is the Debian security archive's current chromium: that archive keeps
# only its newest build, so an exact pin would stop resolving at the next update.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="$(pwd)/target/browser"
launcher="$dir/chromium"
if [ -x "$launcher" ]; then
    echo "$launcher"
    exit 0
fi

. /etc/os-release
if [ "${ID:-}" != debian ] || [ -z "${VERSION_CODENAME:-}" ]; then
    echo "chromium-in-target: needs a Debian machine (found ${PRETTY_NAME:-unknown})" >&2
    exit 1
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mirror="${DEBIAN_MIRROR:-http://deb.debian.org}"

# A half-finished earlier attempt leaves no launcher; start it over from scratch.
rm -rf "$dir"
apt_dir="$dir/apt"
root="$dir/root"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/sources.list.d" "$root"
# Only Debian's own archives: a source the image may list besides (a vendor's
# repository) could be unreachable and fail the update.
cat >"$apt_dir/sources.list" <<EOF
deb [signed-by=$keyring] $mirror/debian $VERSION_CODENAME main
deb [signed-by=$keyring] $mirror/debian $VERSION_CODENAME-updates main
deb [signed-by=$keyring] $mirror/debian-security $VERSION_CODENAME-security main
EOF
apt_opts=(
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir"
    -o "Dir::Cache::Archives=$apt_dir/archives"
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    # Downloads as whoever runs this: apt's _apt user cannot write into target/.
    -o "APT::Sandbox::User=$(id -un)"
    # Nothing is installed into the system, so the system's dpkg lock is not taken.
    -o Debug::NoLocking=1
    -o Acquire::Retries=3
)

echo "chromium-in-target: resolving chromium against $mirror ($VERSION_CODENAME)" >&2
apt-get "${apt_opts[@]}" -qq update >&2
# fonts-dejavu-core: a machine without any font would render the picture's text as
# nothing; where the font is installed already, apt leaves it out.
apt-get "${apt_opts[@]}" -qq -y --no-install-recommends --download-only \
    install chromium fonts-dejavu-core >&2

# apt leaves out what the machine has installed at the same version; the browser
# itself and its data files are still needed here, so those two are fetched alone.
for pkg in chromium chromium-common; do
    if ! compgen -G "$apt_dir/archives/${pkg}_*.deb" >/dev/null; then
        (cd "$apt_dir/archives" && apt-get "${apt_opts[@]}" -qq download "$pkg" >&2)
    fi
done
debs=("$apt_dir"/archives/*.deb)
for deb in "${debs[@]}"; do
    dpkg -x "$deb" "$root"
done
if [ ! -x "$root/usr/lib/chromium/chromium" ]; then
    echo "chromium-in-target: the chromium package held no usr/lib/chromium/chromium" >&2
    exit 1
fi

# Every unpacked directory that holds a shared object, for the dynamic loader.
lib_path="$(find "$root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)"
# Fonts unpacked here are found through a fontconfig file that adds them to the
# machine's own configuration (absent on a bare image: ignore_missing); its cache
# directory comes first, so a font cache is written under target/, not /var/cache.
cat >"$dir/fonts.conf" <<EOF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <cachedir>$dir/fontcache</cachedir>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>$root/usr/share/fonts</dir>
</fontconfig>
EOF
printf '%s\n' "${debs[@]##*/}" >"$dir/packages.txt"
# The archives are unpacked; keeping them would only double target/browser's size.
rm -f "${debs[@]}"

# The launcher is written last: its presence means the install finished.
cat >"$launcher.tmp" <<EOF
#!/bin/sh
# Written by .ci/chromium-in-target.sh: Debian's chromium unpacked under $root.
LD_LIBRARY_PATH="$lib_path\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" \\
FONTCONFIG_FILE="$dir/fonts.conf" \\
exec "$root/usr/lib/chromium/chromium" "\$@"
EOF
chmod +x "$launcher.tmp"
mv "$launcher.tmp" "$launcher"
echo "chromium-in-target: $(grep -c . "$dir/packages.txt") packages unpacked under $root ($(grep '^chromium_' "$dir/packages.txt"))" >&2
echo "$launcher"
