// Embedded assets: SQL migrations are imported as text, the docs UI bundle as a file path.
declare module "*.sql" {
  const text: string;
  export default text;
}
