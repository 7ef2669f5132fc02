// The two engines behind store::connect.
#pragma once

#include <memory>
#include <string>

#include "store/connection.hpp"

namespace tollgate::store {

std::unique_ptr<Connection> connectSqlite(const std::string& path);
std::unique_ptr<Connection> connectPostgres(const std::string& url);

}  // namespace tollgate::store
