; Inno Setup 6 script for nanobot Desktop (Windows, x64). Not built or checked on the Linux machine
; this project is developed on: it needs Windows and Inno Setup (https://jrsoftware.org/isinfo.php).
;
;   python packaging\build.py                  -> dist\nanobot-desktop\ (nanobot-desktop.exe + -cli.exe)
;   iscc packaging\windows\installer.iss       -> dist\nanobot-desktop-<version>-setup.exe
;   iscc /DAppVersion=0.2.0 packaging\windows\installer.iss   (override the version)
;
; Per-user install by default (no administrator rights: {autopf} is %LOCALAPPDATA%\Programs then);
; the dialog offers "for all users". The uninstaller removes the program only: the workspace and
; %USERPROFILE%\.nanobot are the user's data and stay.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "nanobot Desktop"
#define AppExe "nanobot-desktop.exe"
; The app's id (nanobot_desktop/identity.py): the process sets it too, so the taskbar groups the two.
#define AppUserModelId "io.github.nanobot_desktop.NanobotDesktop"
#define RepoRoot AddBackslash(SourcePath) + "..\.."

[Setup]
; A fixed AppId lets later versions update this installation in place.
AppId={{6E0F5D1C-7B7A-4C39-9B0E-2B8D7F3A9C41}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=nanobot Desktop contributors
DefaultDirName={autopf}\nanobot Desktop
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#RepoRoot}\dist
OutputBaseFilename=nanobot-desktop-{#AppVersion}-setup
; build.py draws this icon from resources\icons\app.svg before running PyInstaller.
SetupIconFile={#RepoRoot}\build\icons\nanobot-desktop.ico
UninstallDisplayIcon={app}\{#AppExe}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; The app may be running (it lives in the tray): ask to close it before files are replaced.
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "startup"; Description: "Start nanobot Desktop when I sign in (it waits in the tray)"; GroupDescription: "Other:"; Flags: unchecked

[Files]
Source: "{#RepoRoot}\dist\nanobot-desktop\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; AppUserModelID: "{#AppUserModelId}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; AppUserModelID: "{#AppUserModelId}"; Tasks: desktopicon
Name: "{userstartup}\{#AppName}"; Filename: "{app}\{#AppExe}"; AppUserModelID: "{#AppUserModelId}"; Tasks: startup

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
