// The one source of the targets that only carry a precompiled header (cmake/pch.cmake).
