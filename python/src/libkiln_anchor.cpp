// libkiln.so is made of Kiln's static libraries, linked whole
// (python/CMakeLists.txt); a shared library needs one source of its own.
namespace kiln::internal {
int shared_library_anchor = 0;
}  // namespace kiln::internal
